// libpeerreduce.so is made of the project's archives, linked whole (package/CMakeLists.txt); a shared
// library needs one translation unit of its own, and this is it. It defines nothing.
