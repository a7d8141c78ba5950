#include "lang/parser.hpp"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <set>
#include <vector>

#include "kiln/errors.hpp"
#include "lang/splitting.hpp"

namespace kiln::lang {
namespace {

struct Line {
  std::string_view file;
  int number;
  [[noreturn]] void fail(const std::string& what) const {
    throw KernelSourceError(std::string(file) + ":" + std::to_string(number) + ": " + what);
  }
};

bool parse_type(std::string_view text, ElementType& type) {
  static const std::pair<std::string_view, ElementType> kTypes[] = {
      {"double", ElementType::f64}, {"float", ElementType::f32},  {"int32", ElementType::i32},
      {"int64", ElementType::i64},  {"int", ElementType::i64},    {"bool", ElementType::boolean}};
  for (const auto& [name, value] : kTypes)
    if (text == name) {
      type = value;
      return true;
    }
  return false;
}

bool is_space(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f'; }

bool is_identifier(std::string_view text) {
  if (text.empty() || std::isdigit(static_cast<unsigned char>(text[0]))) return false;
  return std::all_of(text.begin(), text.end(), [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; });
}

// The words of a declaration; commas separate like blanks. No regex: a Runtime
// parses every embedded kernel when it starts, and std::regex made that 60 us.
std::vector<std::string_view> words(std::string_view text) {
  std::vector<std::string_view> out;
  std::size_t i = 0;
  while (i < text.size()) {
    while (i < text.size() && (is_space(text[i]) || text[i] == ',')) ++i;
    const std::size_t begin = i;
    while (i < text.size() && !is_space(text[i]) && text[i] != ',') ++i;
    if (i > begin) out.push_back(text.substr(begin, i - begin));
  }
  return out;
}

// Kernel, argument and parameter names alike (docs/manual/kernel-language.md, "Kernel sources").
void check_not_reserved(const Line& line, std::string_view name) {
  if (name.starts_with("kiln")) line.fail("names starting with 'kiln' are reserved: '" + std::string(name) + "'");
}

void check_name(const Line& line, std::string_view name, std::set<std::string, std::less<>>& taken) {
  if (!is_identifier(name)) line.fail("'" + std::string(name) + "' is not an identifier");
  check_not_reserved(line, name);
  if (!taken.emplace(name).second) line.fail("'" + std::string(name) + "' is declared twice");
}

std::string_view trimmed(std::string_view text) {
  while (!text.empty() && is_space(text.front())) text.remove_prefix(1);
  while (!text.empty() && is_space(text.back())) text.remove_suffix(1);
  return text;
}

// "name[rank]" with rank 1 to 4 (blanks allowed around the brackets' content).
bool split_array(std::string_view text, std::string_view& name, int& rank) {
  const auto open = text.find('[');
  if (open == std::string_view::npos || text.empty() || text.back() != ']') return false;
  const std::string_view inside = trimmed(text.substr(open + 1, text.size() - open - 2));
  if (inside.size() != 1 || inside[0] < '1' || inside[0] > '4') return false;
  name = trimmed(text.substr(0, open));
  rank = inside[0] - '0';
  return true;
}

// What an array's or a size's declaration names that may be declared below
// it: resolved once the whole source is read (resolve_extents).
struct PendingArray {
  Line line;
  std::size_t arg;                 // into KernelInfo::args
  std::vector<std::string> dims;   // the brackets' contents, as written
  std::string indexes;             // the size a table's entries index, or empty
};
struct PendingSize {
  Line line;
  std::string start, end;  // the parameters of the range it contains, or empty
};
struct Pending {
  std::vector<PendingArray> arrays;
  std::vector<PendingSize> sizes;  // per KernelInfo::sizes
  std::vector<Line> temporaries;   // per KernelInfo::temporaries
};

// `#pragma kiln array <type> <name>[<dim>]...[<dim>] [indexes <size> [or -1]]`.
// Each dim is a rank digit (the old, unchecked form: `w[2]`) or an extent.
void parse_array(const Line& line, const std::vector<std::string_view>& w, std::string_view rest, KernelInfo& info,
                 std::set<std::string, std::less<>>& taken, Pending& pending) {
  const auto usage = [&] {
    line.fail("expected '#pragma kiln array <double|float|int32|int64|bool> <name>[<extent>]...[<extent>] "
              "[indexes <size> [or -1]]' (1 to 4 extents) or '... <name>[<rank 1-4>]'");
  };
  ElementType type;
  if (w.size() < 2 || !parse_type(w[0], type)) usage();
  std::string_view text = trimmed(rest.substr(w[0].size()));
  const std::size_t open = text.find('[');
  if (open == std::string_view::npos) usage();
  const std::string_view name = trimmed(text.substr(0, open));
  PendingArray array{line, info.args.size(), {}, {}};
  std::size_t i = open;
  while (i < text.size() && text[i] == '[') {
    const std::size_t close = text.find(']', i);
    if (close == std::string_view::npos) usage();
    array.dims.emplace_back(trimmed(text.substr(i + 1, close - i - 1)));
    i = close + 1;
    while (i < text.size() && is_space(text[i])) ++i;
  }
  if (array.dims.empty() || array.dims.size() > 4) usage();
  const std::vector<std::string_view> tail = words(text.substr(i));
  if (!tail.empty()) {
    if (tail[0] != "indexes" || (tail.size() != 2 && !(tail.size() == 4 && tail[2] == "or" && tail[3] == "-1")))
      usage();
    if (type != ElementType::i32 && type != ElementType::i64)
      line.fail("'" + std::string(name) + "' indexes " + std::string(tail[1]) + ": a table holds int32 or int64");
    array.indexes = tail[1];
  }
  ArgDecl arg;
  arg.name = name;
  arg.type = type;
  arg.missing_allowed = tail.size() == 4;
  info.args.push_back(std::move(arg));
  check_name(line, name, taken);
  pending.arrays.push_back(std::move(array));
}

// `#pragma kiln size <name> [contains <start> <end>]`.
void parse_size(const Line& line, const std::vector<std::string_view>& w, KernelInfo& info,
                std::set<std::string, std::less<>>& taken, Pending& pending) {
  if (!(w.size() == 1 || (w.size() == 4 && w[1] == "contains")))
    line.fail("expected '#pragma kiln size <name> [contains <start> <end>]'");
  check_name(line, w[0], taken);
  info.sizes.push_back({std::string(w[0]), std::nullopt, std::nullopt});
  pending.sizes.push_back({line, w.size() == 4 ? std::string(w[2]) : "", w.size() == 4 ? std::string(w[3]) : ""});
}

// An integer parameter (domain or static int) by name.
std::optional<std::size_t> integer_param(const KernelInfo& info, std::string_view name) {
  for (std::size_t p = 0; p < info.params.size(); ++p)
    if (info.params[p].name == name && info.params[p].type == ElementType::i64) return p;
  return std::nullopt;
}

std::optional<std::int64_t> parse_integer(std::string_view text) {
  std::int64_t value = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (error != std::errc() || end != text.data() + text.size()) return std::nullopt;
  return value;
}

// "<int>", "<name>", "<name> + <int>" or "<name> - <int>".
Extent parse_extent(const Line& line, const KernelInfo& info, std::string_view arg, std::string_view text) {
  const auto bad = [&](const std::string& why) {
    line.fail("'" + std::string(arg) + "[" + std::string(text) + "]': " + why);
  };
  if (const auto constant = parse_integer(text)) {
    if (*constant < 0) bad("an extent is not negative");
    return {Extent::Of::constant, 0, *constant};
  }
  const std::size_t sign = text.find_first_of("+-");
  const std::string_view name = trimmed(text.substr(0, sign));
  std::int64_t offset = 0;
  if (sign != std::string_view::npos) {
    const auto amount = parse_integer(trimmed(text.substr(sign + 1)));
    if (!amount || *amount < 0) bad("expected <size> + <integer> or <size> - <integer>");
    offset = text[sign] == '-' ? -*amount : *amount;
  }
  for (std::size_t s = 0; s < info.sizes.size(); ++s)
    if (info.sizes[s].name == name) return {Extent::Of::size, s, offset};
  if (const auto param = integer_param(info, name)) return {Extent::Of::param, *param, offset};
  std::string why = "'";  // (built in steps: g++ 12 warns falsely on one concatenation here)
  why.append(name);
  why += "' is neither a size ('#pragma kiln size') nor an integer parameter";
  bad(why);
  return {};  // not reached: bad throws
}

bool is_rank(const std::string& dim) { return dim.size() == 1 && dim[0] >= '1' && dim[0] <= '4'; }

// A kernel that declares no size and only `name[<rank>]` arrays is of the
// old, unchecked form; any other declares an extent per dimension.
bool old_form(const KernelInfo& info, const Pending& pending) {
  if (!info.sizes.empty()) return false;
  for (const PendingArray& array : pending.arrays)
    if (array.dims.size() != 1 || !is_rank(array.dims[0])) return false;
  return true;
}


// Extents with no size or parameter among them (`z[7]`) are far likelier a
// mistyped rank than a kernel of constant extents: refused as the old form.
void named_extent_or_rank(const KernelInfo& info, const Pending& pending) {
  if (!info.sizes.empty()) return;
  for (const PendingArray& array : pending.arrays)
    for (const std::string& dim : array.dims)
      if (!parse_integer(dim)) return;
  for (const PendingArray& array : pending.arrays)
    if (array.dims.size() != 1 || !is_rank(array.dims[0]))
      array.line.fail("'" + info.args[array.arg].name + "': expected a rank (1-4) in '[<rank 1-4>]', or extents "
                      "among which a size or parameter names one ('[cells][3]', '[nz][ny][nx]')");
}

void resolve_extents(KernelInfo& info, const Pending& pending) {
  if (old_form(info, pending)) {
    for (const PendingArray& array : pending.arrays) {
      if (!array.indexes.empty())
        array.line.fail("'" + info.args[array.arg].name + "' indexes a size: declare its extents ([<size>][<n>])");
      info.args[array.arg].rank = array.dims[0][0] - '0';
    }
    return;
  }
  named_extent_or_rank(info, pending);
  for (std::size_t s = 0; s < info.sizes.size(); ++s) {
    const PendingSize& size = pending.sizes[s];
    if (size.start.empty()) continue;
    const auto start = integer_param(info, size.start), end = integer_param(info, size.end);
    if (!start || !end)
      size.line.fail("size '" + info.sizes[s].name + "' contains " + size.start + " " + size.end +
                     ": both must be integer parameters (domain or static int) declared in the kernel");
    info.sizes[s].start = start;
    info.sizes[s].end = end;
  }
  std::vector<bool> used(info.sizes.size(), false);
  for (const PendingArray& array : pending.arrays) {
    ArgDecl& arg = info.args[array.arg];
    for (const std::string& dim : array.dims) {
      arg.extents.push_back(parse_extent(array.line, info, arg.name, dim));
      if (arg.extents.back().of == Extent::Of::size) used[arg.extents.back().index] = true;
    }
    arg.rank = static_cast<int>(arg.extents.size());
    if (array.indexes.empty()) continue;
    for (std::size_t s = 0; s < info.sizes.size(); ++s)
      if (info.sizes[s].name == array.indexes) arg.indexes = s;
    if (!arg.indexes) array.line.fail("'" + arg.name + "' indexes '" + array.indexes + "', which is not a size");
  }
  for (std::size_t s = 0; s < info.sizes.size(); ++s)
    if (!used[s]) pending.sizes[s].line.fail("size '" + info.sizes[s].name + "' is the extent of no array");
}

// `#pragma kiln temporary <type> <name>[<rank>] like <array>`: `array` is
// declared above it, with the same rank (checked once ranks are known).
void parse_temporary(const Line& line, const std::vector<std::string_view>& w, std::string_view rest,
                     KernelInfo& info, std::set<std::string, std::less<>>& taken, Pending& pending) {
  const auto usage = [&] {
    line.fail("expected '#pragma kiln temporary <double|float|int32|int64|bool> <name>[<rank 1-4>] like <array>'");
  };
  ElementType type;
  const std::size_t like_at = rest.rfind(" like ");
  if (w.size() < 4 || w[w.size() - 2] != "like" || like_at == std::string_view::npos || !parse_type(w[0], type))
    usage();
  std::string_view name;
  int rank = 0;
  if (!split_array(trimmed(rest.substr(w[0].size(), like_at - w[0].size())), name, rank)) usage();
  check_name(line, name, taken);
  const std::string_view like = w.back();
  const auto found = std::find_if(pending.arrays.begin(), pending.arrays.end(),
                                  [&](const PendingArray& a) { return info.args[a.arg].name == like; });
  if (found == pending.arrays.end())
    line.fail("temporary '" + std::string(name) + "': '" + std::string(like) + "' is not an array declared above it");
  info.temporaries.push_back({std::string(name), type, rank, found->arg});
  pending.temporaries.push_back(line);
}

void check_temporary_ranks(const KernelInfo& info, const Pending& pending) {
  for (std::size_t t = 0; t < info.temporaries.size(); ++t) {
    const TemporaryDecl& temp = info.temporaries[t];
    const ArgDecl& like = info.args[temp.like];
    if (like.rank != temp.rank)
      pending.temporaries[t].fail("temporary '" + temp.name + "' has rank " + std::to_string(temp.rank) + ", '" +
                                  like.name + "' rank " + std::to_string(like.rank) +
                                  ": a temporary is laid out like an array of its rank");
  }
}

// One `#pragma kiln <what> <rest>` line.
void parse_declaration(const Line& line, std::string_view what, std::string_view rest, KernelInfo& info,
                       std::set<std::string, std::less<>>& taken, Pending& pending) {
  const std::vector<std::string_view> w = words(rest);
  ElementType type;
  if (what == "kernel") {
    if (!info.name.empty()) line.fail("a second '#pragma kiln kernel'");
    if (w.size() != 1 || !is_identifier(w[0])) line.fail("expected '#pragma kiln kernel <name>'");
    check_not_reserved(line, w[0]);
    info.name = w[0];
  } else if (what == "array") {
    parse_array(line, w, rest, info, taken, pending);
  } else if (what == "size") {
    parse_size(line, w, info, taken, pending);
  } else if (what == "temporary") {
    parse_temporary(line, w, rest, info, taken, pending);
  } else if (what == "scalar") {
    if (w.size() != 2 || !parse_type(w[0], type))
      line.fail("expected '#pragma kiln scalar <double|float|int32|int64|bool> <name>'");
    check_name(line, w[1], taken);
    ArgDecl scalar;
    scalar.name = w[1];
    scalar.type = type;
    info.args.push_back(std::move(scalar));
  } else if (what == "domain") {
    if (w.empty()) line.fail("expected '#pragma kiln domain <name> [<name>...]'");
    for (std::string_view name : w) {
      check_name(line, name, taken);
      info.params.push_back({std::string(name), ParamKind::domain, ElementType::i64});
    }
  } else if (what == "static") {
    if (w.size() != 2 || (w[0] != "bool" && w[0] != "int" && w[0] != "double") || !parse_type(w[0], type))
      line.fail("expected '#pragma kiln static <bool|int|double> <name>'");
    check_name(line, w[1], taken);
    info.params.push_back({std::string(w[1]), ParamKind::static_value, type});
  } else {
    line.fail("unknown declaration '#pragma kiln " + std::string(what) +
              "' (kernel, array, size, temporary, scalar, domain, static)");
  }
}

// Splits "  #  pragma kiln what rest" into (what, rest); false for any other line.
bool match_pragma(std::string_view text, std::string_view& what, std::string_view& rest) {
  auto skip = [&](std::size_t i) {
    while (i < text.size() && is_space(text[i])) ++i;
    return i;
  };
  std::size_t i = skip(0);
  if (i == text.size() || text[i] != '#') return false;
  i = skip(i + 1);
  for (std::string_view word : {std::string_view("pragma"), std::string_view("kiln")}) {
    if (text.substr(i, word.size()) != word) return false;
    i += word.size();
    if (i < text.size() && !is_space(text[i])) return false;
    i = skip(i);
  }
  const std::size_t end = text.find_first_of(" \t", i);
  what = text.substr(i, end == std::string_view::npos ? std::string_view::npos : end - i);
  rest = end == std::string_view::npos ? std::string_view() : trimmed(text.substr(end));
  return true;
}

}  // namespace

KernelInfo parse_kernel_source(std::string_view source, std::string_view file_name) {
  KernelInfo info;
  Pending pending;
  info.file_name = file_name;
  info.source = source;
  info.body.reserve(source.size());
  std::set<std::string, std::less<>> taken;
  int number = 0;
  std::size_t pos = 0;
  while (pos <= source.size()) {
    std::size_t end = source.find('\n', pos);
    if (end == std::string_view::npos) end = source.size();
    const std::string_view text = source.substr(pos, end - pos);
    ++number;
    std::string_view what, rest;
    if (match_pragma(text, what, rest)) parse_declaration({file_name, number}, what, rest, info, taken, pending);
    else info.body += text;  // a declaration line stays as an empty line: numbering is kept
    if (end < source.size()) info.body += '\n';
    pos = end + 1;
  }
  if (info.name.empty()) Line{file_name, 1}.fail("no '#pragma kiln kernel <name>' declaration");
  resolve_extents(info, pending);
  check_temporary_ranks(info, pending);
  if (const auto refusal = why_not_split(info.body)) {
    info.splits = false;
    info.single_thread_why = (refusal->line > 0 ? "line " + std::to_string(refusal->line) + " " : "its body ") +
                             refusal->why;
  }
  return info;
}

}  // namespace kiln::lang
