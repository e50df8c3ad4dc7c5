# Run by gmp_protoc after protoc: renames generated accessors that collide with a function-like
# macro of the C or C++ standard library. A field named `assert` (a scenario's `assert { ... }`)
# gets a getter `assert(int index)`, which <cassert>'s macro, pulled in by protobuf's own headers,
# expands; protoc 3.21 renames C++ keywords this way (`case_`, `default_`) but not macros. The
# getter becomes `assert_`, the name protoc gives keywords, so a protoc that escapes the name itself
# produces the same header. The field's name in the text format and the descriptor is unchanged.
#   cmake -DFILES="a.pb.h;a.pb.cc" -P protoc_unmacro.cmake
foreach(f ${FILES})
  file(READ ${f} text)
  string(REGEX REPLACE "([^A-Za-z0-9_])assert\\(" "\\1assert_(" fixed "${text}")
  if(NOT fixed STREQUAL text)
    file(WRITE ${f} "${fixed}")
  endif()
endforeach()
