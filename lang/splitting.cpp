#include "lang/splitting.hpp"

#include <algorithm>
#include <cctype>
#include <vector>

namespace kiln::lang {
namespace {

struct Token {
  std::string_view text;
  int line;
};

bool is_word(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }
bool is_identifier(std::string_view t) { return !t.empty() && (std::isalpha(static_cast<unsigned char>(t[0])) || t[0] == '_'); }
bool is_number(std::string_view t) { return !t.empty() && std::isdigit(static_cast<unsigned char>(t[0])); }

// The body's tokens, without comments, string and character literals and
// preprocessor lines (`#pragma clang loop ...`). Operators of two or three
// characters are one token, so `==` is never an assignment.
std::vector<Token> tokens_of(std::string_view s) {
  static constexpr std::string_view kLong[] = {"<<=", ">>=", "::", "->", "++", "--", "==", "!=", "<=", ">=", "&&",
                                               "||", "+=", "-=", "*=", "/=", "%=", "&=", "|=", "^=", "<<", ">>"};
  std::vector<Token> out;
  int line = 1;
  bool line_start = true;
  std::size_t i = 0;
  const auto skip_to = [&](std::size_t end) {
    for (; i < end && i < s.size(); ++i) line += s[i] == '\n';
  };
  while (i < s.size()) {
    const char c = s[i];
    if (c == '\n') {
      ++line, ++i, line_start = true;
      continue;
    }
    if (std::isspace(static_cast<unsigned char>(c))) {
      ++i;
      continue;
    }
    if (c == '#' && line_start) {
      skip_to(s.find('\n', i) == std::string_view::npos ? s.size() : s.find('\n', i));
      continue;
    }
    line_start = false;
    if (s.substr(i, 2) == "//") {
      const std::size_t end = s.find('\n', i);
      skip_to(end == std::string_view::npos ? s.size() : end);
    } else if (s.substr(i, 2) == "/*") {
      const std::size_t end = s.find("*/", i + 2);
      skip_to(end == std::string_view::npos ? s.size() : end + 2);
    } else if (c == '"' || c == '\'') {
      std::size_t j = i + 1;
      while (j < s.size() && s[j] != c && s[j] != '\n') j += s[j] == '\\' ? 2 : 1;
      out.push_back({s.substr(i, 1), line});  // a literal's place: an operand, never a target
      skip_to(j + 1);
    } else if (is_word(c)) {
      std::size_t j = i;
      // A number takes its exponent's sign and a digit separator with it.
      while (j < s.size() && (is_word(s[j]) || (is_number(s.substr(i)) && (s[j] == '.' || s[j] == '\'' ||
                                                                           ((s[j] == '+' || s[j] == '-') &&
                                                                            (s[j - 1] == 'e' || s[j - 1] == 'E'))))))
        ++j;
      out.push_back({s.substr(i, j - i), line});
      i = j;
    } else {
      std::size_t n = 1;
      for (std::string_view op : kLong)
        if (s.substr(i, op.size()) == op) {
          n = op.size();
          break;
        }
      out.push_back({s.substr(i, n), line});
      i += n;
    }
  }
  return out;
}

// The index of the token closing the bracket at `open`, or the last token.
std::size_t closing(const std::vector<Token>& t, std::size_t open) {
  const std::string_view o = t[open].text;
  const std::string_view c = o == "(" ? ")" : o == "[" ? "]" : "}";
  int depth = 0;
  for (std::size_t i = open; i < t.size(); ++i) {
    if (t[i].text == o) ++depth;
    else if (t[i].text == c && --depth == 0) return i;
  }
  return t.size() - 1;
}

// The index of the token opening the bracket that closes at `close`.
std::size_t opening(const std::vector<Token>& t, std::size_t close) {
  const std::string_view c = t[close].text;
  const std::string_view o = c == ")" ? "(" : "[";
  int depth = 0;
  for (std::size_t i = close + 1; i-- > 0;) {
    if (t[i].text == c) ++depth;
    else if (t[i].text == o && --depth == 0) return i;
  }
  return 0;
}

struct Span {
  std::size_t first, last;  // token indices, inclusive
  bool holds(std::size_t i) const { return first <= i && i <= last; }
};

// The argument lists of the phase helpers' calls: `kiln :: <helper> ( ... )`.
std::vector<Span> phases(const std::vector<Token>& t) {
  std::vector<Span> out;
  for (std::size_t i = 0; i + 3 < t.size(); ++i) {
    if (t[i].text != "kiln" || t[i + 1].text != "::" || t[i + 3].text != "(") continue;
    if (std::find(std::begin(kPhaseHelpers), std::end(kPhaseHelpers), t[i + 2].text) == std::end(kPhaseHelpers))
      continue;
    out.push_back({i + 3, closing(t, i + 3)});
  }
  return out;
}

// `name = [captures](parameters) specifiers { body }`.
struct Lambda {
  std::string_view name;
  std::size_t defined;  // the name's token
  Span body;
};

std::vector<Lambda> named_lambdas(const std::vector<Token>& t) {
  std::vector<Lambda> out;
  for (std::size_t i = 0; i + 2 < t.size(); ++i) {
    if (!is_identifier(t[i].text) || t[i + 1].text != "=" || t[i + 2].text != "[") continue;
    std::size_t j = closing(t, i + 2) + 1;
    while (j < t.size() && t[j].text != "{" && t[j].text != ";") j = t[j].text == "(" ? closing(t, j) + 1 : j + 1;
    if (j < t.size() && t[j].text == "{") out.push_back({t[i].text, i, {j, closing(t, j)}});
  }
  return out;
}

bool is_assignment(std::string_view op) {
  static constexpr std::string_view kOps[] = {"=", "+=", "-=", "*=", "/=", "%=", "&=", "|=", "^=", "<<=", ">>="};
  return std::find(std::begin(kOps), std::end(kOps), op) != std::end(kOps);
}

bool is_operand_end(std::string_view t) { return is_identifier(t) || is_number(t) || t == ")" || t == "]"; }

// `auto [a, b] =`, `const auto& [a, b] =`: locals, not an element.
bool structured_binding(const std::vector<Token>& t, std::size_t close) {
  std::size_t open = opening(t, close);
  if (open > 0 && (t[open - 1].text == "&" || t[open - 1].text == "&&")) --open;
  return open > 0 && t[open - 1].text == "auto";
}

// Whether token i writes an element of some array: the assignment or
// increment whose target is `x(...)`, `x[...]`, `*p` or `p->m`.
bool writes_element(const std::vector<Token>& t, std::size_t i) {
  const std::string_view op = t[i].text;
  const auto at = [&](std::size_t k) { return k < t.size() ? t[k].text : std::string_view(); };
  if (op == "++" || op == "--") {
    if (i > 0 && (at(i - 1) == ")" || at(i - 1) == "]")) return true;                     // a(i)++
    return at(i + 1) == "*" || (is_identifier(at(i + 1)) && (at(i + 2) == "(" || at(i + 2) == "[" ||
                                                              at(i + 2) == "->"));  // ++a(i), ++*p
  }
  if (!is_assignment(op) || i == 0) return false;
  const std::string_view target = at(i - 1);
  if (target == ")") return true;
  if (target == "]") return !structured_binding(t, i - 1);
  if (!is_identifier(target) || i < 2) return false;
  if (at(i - 2) == "->") return true;
  return at(i - 2) == "*" && (i < 3 || !is_operand_end(at(i - 3)));  // *p = (a unary *)
}

}  // namespace

std::optional<SplitRefusal> why_not_split(std::string_view body) {
  const std::vector<Token> t = tokens_of(body);
  const std::vector<Span> phase = phases(t);
  const std::vector<Lambda> lambdas = named_lambdas(t);
  const auto in_phase = [&](std::size_t i) {
    return std::any_of(phase.begin(), phase.end(), [&](const Span& s) { return s.holds(i); });
  };
  // A lambda is phase-only when each use of its name lies in a helper's call
  // or in the body of another phase-only lambda: the greatest such set.
  std::vector<bool> phase_only(lambdas.size(), true);
  const auto use_outside = [&](std::size_t l) -> std::optional<std::size_t> {
    for (std::size_t i = 0; i < t.size(); ++i) {
      if (t[i].text != lambdas[l].name || i == lambdas[l].defined || in_phase(i)) continue;
      bool inside = false;
      for (std::size_t m = 0; m < lambdas.size(); ++m)
        inside = inside || (m != l && phase_only[m] && lambdas[m].body.holds(i));
      if (!inside) return i;
    }
    return std::nullopt;
  };
  for (bool changed = true; changed;) {
    changed = false;
    for (std::size_t l = 0; l < lambdas.size(); ++l)
      if (phase_only[l] && use_outside(l)) {
        phase_only[l] = false;
        changed = true;
      }
  }
  for (std::size_t i = 0; i < t.size(); ++i) {
    if (!writes_element(t, i) || in_phase(i)) continue;
    // The innermost lambda whose body holds it (lambdas are listed as defined: the last holding one).
    const auto held = [&](const Lambda& l) { return l.body.holds(i); };
    const auto lambda = std::find_if(lambdas.rbegin(), lambdas.rend(), held);
    if (lambda == lambdas.rend())
      return SplitRefusal{t[i].line, "writes an array element outside the kiln::for_each_* helpers, where every "
                                     "thread of a call runs it"};
    const std::size_t l = static_cast<std::size_t>(lambdas.rend() - lambda - 1);
    if (!phase_only[l])
      return SplitRefusal{t[*use_outside(l)].line, "calls '" + std::string(lambda->name) + "', which writes an array "
                          "element (line " + std::to_string(t[i].line) + "), outside the kiln::for_each_* helpers"};
  }
  if (phase.empty()) return SplitRefusal{0, "calls none of the kiln::for_each_* helpers that share a call's points"};
  return std::nullopt;
}

}  // namespace kiln::lang
