#!/usr/bin/env python3
"""Runs peerreduce-sim once and checks its exit status and output; exits non-zero on any mismatch.

Used by tests/sim/CMakeLists.txt. Everything after "--" is passed to peerreduce-sim.

  --exe PATH                the peerreduce-sim executable
  --exit N                  required exit status
  --stdout REGEX            stdout must match (re.search); repeatable
  --no-stdout REGEX         stdout must not match; repeatable
  --stderr REGEX            stderr must match; repeatable
  --json-verdict REGEX      stdout is exactly one JSON object whose "verdict" matches
  --json-keys KEY...        stdout is one JSON object with these keys ("a.b" names key b of object a)
  --json-equals KEY=VALUE.. stdout is one JSON object with these values (compared as JSON text or string)
  --trace-file PATH         after the run, PATH exists and is a Chrome trace (JSON with traceEvents)
"""
import argparse
import json
import os
import re
import subprocess
import sys

# peerreduce-sim's own runs finish in seconds (longer ones pass --timeout); a hang must fail the test,
# not stall CI.
RUN_TIMEOUT_S = 100


def load_single_json_object(text, problems):
    try:
        value = json.loads(text)
    except json.JSONDecodeError as e:
        problems.append(f"stdout is not one JSON value: {e}")
        return None
    if not isinstance(value, dict):
        problems.append(f"stdout is JSON but not an object: {type(value).__name__}")
        return None
    return value


def lookup(report, dotted):
    """The value at a dotted key path ("memory.bytes_in_use"), or None when a step is missing."""
    value = report
    for part in dotted.split("."):
        if not isinstance(value, dict) or part not in value:
            return None
        value = value[part]
    return value


def main():
    argv = sys.argv[1:]
    if "--" not in argv:
        sys.exit("check_cli.py: put the peerreduce-sim arguments after --")
    split = argv.index("--")
    ours, theirs = argv[:split], argv[split + 1:]
    parser = argparse.ArgumentParser()
    parser.add_argument("--exe", required=True)
    parser.add_argument("--exit", type=int, required=True)
    parser.add_argument("--stdout", action="append", default=[])
    parser.add_argument("--no-stdout", action="append", default=[])
    parser.add_argument("--stderr", action="append", default=[])
    parser.add_argument("--json-verdict")
    parser.add_argument("--json-keys", nargs="+", default=[])
    parser.add_argument("--json-equals", nargs="+", default=[])
    parser.add_argument("--trace-file")
    parser.add_argument("--timeout", type=float, default=RUN_TIMEOUT_S,
                        help="seconds the command may run (default %(default)s)")
    args = parser.parse_args(ours)

    if args.trace_file and os.path.exists(args.trace_file):
        os.remove(args.trace_file)  # a stale file from an earlier run must not pass the check
    result = subprocess.run([args.exe] + theirs, capture_output=True, text=True, timeout=args.timeout)
    problems = []
    if result.returncode != args.exit:
        problems.append(f"exit status {result.returncode}, expected {args.exit}")
    for pattern in args.stdout:
        if not re.search(pattern, result.stdout):
            problems.append(f"stdout does not match {pattern!r}")
    for pattern in args.no_stdout:
        if re.search(pattern, result.stdout):
            problems.append(f"stdout matches {pattern!r} but must not")
    for pattern in args.stderr:
        if not re.search(pattern, result.stderr):
            problems.append(f"stderr does not match {pattern!r}")
    if args.json_verdict or args.json_keys or args.json_equals:
        report = load_single_json_object(result.stdout, problems)
        if report is not None:
            for key in args.json_keys:
                if lookup(report, key) is None:
                    problems.append(f"JSON has no key {key!r}")
            if args.json_verdict is not None:
                verdict = report.get("verdict")
                if not isinstance(verdict, str) or not re.search(args.json_verdict, verdict):
                    problems.append(f"JSON verdict {verdict!r} does not match {args.json_verdict!r}")
            for pair in args.json_equals:
                key, _, want = pair.partition("=")
                got = lookup(report, key)
                if got is None or (json.dumps(got) != want and got != want):
                    problems.append(f"JSON {key} is {got!r}, expected {want}")
    if args.trace_file:
        try:
            with open(args.trace_file, encoding="utf-8") as f:
                trace = json.load(f)
            if not isinstance(trace, dict) or not isinstance(trace.get("traceEvents"), list):
                problems.append("the trace has no traceEvents array")
            elif not any(e.get("ph") == "X" for e in trace["traceEvents"]):
                problems.append("the trace has no step slices")
        except (OSError, json.JSONDecodeError) as e:
            problems.append(f"the trace file is not readable JSON: {e}")

    if problems:
        print("peerreduce-sim " + " ".join(theirs))
        print("--- stdout ---\n" + result.stdout)
        print("--- stderr ---\n" + result.stderr)
        for p in problems:
            print("FAILED: " + p)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
