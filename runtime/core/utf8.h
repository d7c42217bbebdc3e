// UTF-8 to and from code points, for the operators and tools that look inside strings (ONNX
// strings are bytes; these treat them as UTF-8 where a meaning per character is needed).
#pragma once

#include <string>

namespace recur {

// Decodes UTF-8 into code points; false on a malformed sequence (an overlong form, a surrogate,
// a code point above U+10FFFF, or a truncated sequence).
bool decode_utf8(const std::string& s, std::u32string* out);

// Encodes code points, which must be valid (at most U+10FFFF, no surrogates), as UTF-8.
void encode_utf8(const std::u32string& cps, std::string* out);

}  // namespace recur
