// Options: game keyword arguments as strings, parsed on demand.
#include "elf/options.h"

#include <cstdint>
#include <map>
#include <stdexcept>
#include <string>

#include "check.h"

using Values = std::map<std::string, std::string>;

using elf::Options;

TEST(missing_option_gives_the_fallback) {
  const Options options;
  CHECK_EQ(options.Get<int>("max_steps", 500), 500);
  CHECK_EQ(options.Get<std::string>("mode", "fast"), "fast");
  CHECK(!options.Has("max_steps"));
}

TEST(given_option_is_parsed_as_the_requested_type) {
  Options options(Values{{"max_steps", "200"}, {"scale", "0.25"}, {"name", "pole"}, {"big", "-9000000000"}});
  CHECK(options.Has("max_steps"));
  CHECK_EQ(options.Get<int>("max_steps", 500), 200);
  CHECK_EQ(options.Get<double>("scale", 1.0), 0.25);
  CHECK_EQ(options.Get<std::string>("name", ""), "pole");
  CHECK_EQ(options.Get<int64_t>("big", 0), int64_t{-9000000000});
}

TEST(bool_option_accepts_python_and_c_spellings) {
  for (const char* yes : {"true", "True", "1"}) CHECK(Options(Values{{"flag", yes}}).Get<bool>("flag", false));
  for (const char* no : {"false", "False", "0"}) CHECK(!Options(Values{{"flag", no}}).Get<bool>("flag", true));
  CHECK_THROWS(Options(Values{{"flag", "yes"}}).Get<bool>("flag", false), std::invalid_argument, "option 'flag'");
}

TEST(malformed_number_names_the_option_and_the_text) {
  const Options options(Values{{"max_steps", "12abc"}, {"empty", ""}, {"real", "1.5"}});
  CHECK_THROWS(options.Get<int>("max_steps", 1), std::invalid_argument, "option 'max_steps'");
  CHECK_THROWS(options.Get<int>("max_steps", 1), std::invalid_argument, "'12abc'");
  CHECK_THROWS(options.Get<int>("empty", 1), std::invalid_argument, "option 'empty'");
  CHECK_THROWS(options.Get<int>("real", 1), std::invalid_argument, "'1.5'");
}

TEST(set_overwrites_and_values_lists_everything) {
  Options options;
  options.Set("a", "1");
  options.Set("a", "2");
  options.Set("b", "x");
  CHECK_EQ(options.Get<int>("a", 0), 2);
  CHECK_EQ(options.values().size(), std::size_t{2});
}

int main(int argc, char** argv) { return elf::testing::RunAll(argc, argv); }
