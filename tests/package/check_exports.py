#!/usr/bin/env python3
"""Checks that a shared library exports its public API and nothing else.

Every exported (dynamic, defined) symbol must be
- a C function pr* declared in one of the public headers, or
- a C++ symbol of the peerreduce namespace whose entity (the class of a member, the function, the
  type of type information or a virtual table) is declared in the public headers;
and every pr* function the headers declare for this library must be exported (else applications
would fail to link). Prints the count of exported symbols by kind.

usage: check_exports.py LIBRARY --headers DIR [DIR...] [--c-functions-of HEADER...] [--symbols FILE]
  --c-functions-of: the headers whose pr* functions this library must define (default: every header
                    of the given folders)
  --symbols: read `nm -D --defined-only` output from FILE instead of running nm (for tests)
"""
import argparse
import pathlib
import re
import subprocess
import sys

WRAPPERS = re.compile(r"^(typeinfo name for|typeinfo for|vtable for|VTT for|construction vtable for|"
                      r"non-virtual thunk to|virtual thunk to|guard variable for) ")


# operator<<, operator(), operator== ...: named by a token free of the characters that delimit names.
OPERATOR = re.compile(r"\boperator\s*(<=>|<<=|>>=|<<|>>|<=|>=|==|!=|\(\)|\[\]|->|[-+*/%^&|~!=<>,]=?|new|delete)\s*(?=\()")


def operator_name(match):
    return "operator#" + "".join(f"{ord(c):02x}" for c in match.group(1))


def strip_comments(text):
    text = re.sub(r"/\*.*?\*/", " ", text, flags=re.S)
    return re.sub(r"//[^\n]*", " ", text)


def public_names(headers):
    """Type and function names declared in the public headers, and the C functions."""
    types, functions, c_functions = set(), set(), set()
    for header in headers:
        text = strip_comments(header.read_text())
        for m in re.finditer(r"\b(?:class|struct|enum class|enum|union)\s+(?:\[\[[^\]]*\]\]\s*)?(\w+)", text):
            types.add(m.group(1))
        for m in re.finditer(r"\busing\s+(\w+)\s*=", text):
            types.add(m.group(1))
        for m in re.finditer(OPERATOR, text):
            functions.add(operator_name(m))
        for m in re.finditer(r"\b(~?\w+)\s*\(", text):
            functions.add(m.group(1))
        for m in re.finditer(r"^([^\n;{}]*?)\b(pr[A-Z]\w*)\s*\(", text, flags=re.M):
            if not re.search(r"\binline\b", m.group(1)):  # inline ones are compiled into the caller
                c_functions.add(m.group(2))
    return types, functions, c_functions


def exported_symbols(library, symbols_file):
    if symbols_file:
        text = pathlib.Path(symbols_file).read_text()
    else:
        text = subprocess.run(["nm", "-D", "--defined-only", library], check=True, capture_output=True,
                              text=True).stdout
    mangled = [line.split()[-1] for line in text.splitlines() if line.strip()]
    demangled = subprocess.run(["c++filt"], input="\n".join(mangled), check=True, capture_output=True,
                               text=True).stdout.splitlines()
    return list(zip(mangled, demangled))


def qualified_path(demangled):
    """['peerreduce', 'Communicator', 'create'] for peerreduce::Communicator::create(...) and the like."""
    name = WRAPPERS.sub("", demangled)
    name = re.sub(r"\[abi:\w+\]", "", name)
    name = OPERATOR.sub(operator_name, name)
    depth, cut = 0, len(name)
    for i, ch in enumerate(name):  # the name ends at the first '(' outside template arguments
        if ch == "<":
            depth += 1
        elif ch == ">":
            depth -= 1
        elif ch == "(" and depth == 0:
            cut = i
            break
    name = re.sub(r"<.*>", "", name[:cut])  # StatusOr<Plan>::value -> StatusOr::value
    return [part.strip() for part in name.split("::")]


def check(library, headers, c_headers, symbols_file):
    types, functions, _ = public_names(headers)
    _, _, c_required = public_names(c_headers)
    problems, kinds = [], {"C": 0, "C++": 0}
    exported_c = set()
    for mangled, demangled in exported_symbols(library, symbols_file):
        if not mangled.startswith("_Z"):
            if re.fullmatch(r"pr[A-Z]\w*", mangled) and mangled in public_names(headers)[2]:
                kinds["C"] += 1
                exported_c.add(mangled)
            else:
                problems.append(f"exported C symbol {mangled} is not a function of the public headers")
            continue
        path = qualified_path(demangled)
        if len(path) < 2 or path[0] != "peerreduce":
            problems.append(f"exported {demangled} is outside the peerreduce namespace")
            continue
        inner = path[1:]
        while inner and inner[0] in ("sim", "detail"):  # namespaces the public headers use
            inner = inner[1:]
        if not inner:
            problems.append(f"exported {demangled} names no entity")
            continue
        entity = inner[0]
        public = entity in types if len(inner) > 1 or WRAPPERS.match(demangled) else (
            entity in functions or entity in types)
        if not public:
            problems.append(f"exported {demangled}: {entity} is not declared in the public headers")
            continue
        kinds["C++"] += 1
    for name in sorted(c_required - exported_c):
        problems.append(f"{name} is declared in the public headers but not exported")
    return problems, kinds


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("library")
    parser.add_argument("--headers", nargs="+", required=True)
    parser.add_argument("--c-functions-of", nargs="*")
    parser.add_argument("--symbols")
    args = parser.parse_args()
    headers = [h for d in args.headers for h in sorted(pathlib.Path(d).glob("*.h"))]
    c_headers = [pathlib.Path(h) for h in args.c_functions_of] if args.c_functions_of is not None else headers
    problems, kinds = check(args.library, headers, c_headers, args.symbols)
    print(f"{args.library}: {kinds['C'] + kinds['C++']} public symbols exported "
          f"({kinds['C']} C functions, {kinds['C++']} C++ symbols)")
    for problem in problems:
        print("  " + problem)
    if problems:
        print(f"{len(problems)} problem(s): the library must export its public API and nothing else")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
