// A dependency-free test harness for the C++ tests (one executable per engine
// concept, run by ctest).
//
//   TEST(name_of_the_behaviour) { CHECK_EQ(Add(1, 2), 3); }
//   int main(int argc, char** argv) { return elf::testing::RunAll(argc, argv); }
//
// CHECK(cond), CHECK_EQ(a, b), CHECK_NE(a, b), CHECK_THROWS(expr, Exception,
// "part of the message") record a failure with file:line and the values, and
// the test goes on; REQUIRE(cond) also ends the test. A test that throws
// fails. A watchdog ends the process, naming the test, if one runs longer
// than kTestLimitSeconds, so an engine hang shows as a named failure rather
// than a ctest timeout. `./test_x name` runs the tests whose name contains
// `name`. main returns non-zero if any check failed.
#pragma once

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <iostream>
#include <mutex>
#include <sstream>
#include <string>
#include <thread>
#include <type_traits>
#include <utility>
#include <vector>

namespace elf::testing {

#if defined(__SANITIZE_THREAD__) || defined(__SANITIZE_ADDRESS__)
inline constexpr bool kSanitized = true;
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer) || __has_feature(address_sanitizer)
inline constexpr bool kSanitized = true;
#else
inline constexpr bool kSanitized = false;
#endif
#else
inline constexpr bool kSanitized = false;
#endif

// The watchdog's limit: a hang catcher, not a time check, so far above any
// test's length on a loaded machine: the longest take about 20 s alone under
// ThreadSanitizer, and a plain test of a few seconds alone ran past 60 s on a
// 2-core machine with other work beside it. ctest's TIMEOUT per executable
// (CMakeLists.txt) is above it, so a hang is named here first.
inline constexpr int kTestLimitSeconds = 600;

// An iteration count, divided by `divisor` under a sanitizer (at least 1).
inline int Scaled(int count, int divisor = 4) { return kSanitized ? std::max(1, count / divisor) : count; }

struct TestCase {
  const char* name;
  void (*body)();
};

inline std::vector<TestCase>& Tests() {
  static std::vector<TestCase> tests;
  return tests;
}

inline std::atomic<int>& Failures() {
  static std::atomic<int> failures{0};
  return failures;
}

// Thrown by REQUIRE to end the current test.
struct Abort {};

struct Registrar {
  Registrar(const char* name, void (*body)()) { Tests().push_back({name, body}); }
};

inline void Fail(const char* file, int line, const std::string& what) {
  ++Failures();
  static std::mutex print;
  std::lock_guard<std::mutex> lock(print);
  std::cerr << file << ":" << line << ": FAILED " << what << std::endl;
}

// Prints a value if it can be printed.
template <typename T, typename = void>
struct Printable : std::false_type {};
template <typename T>
struct Printable<T, std::void_t<decltype(std::declval<std::ostream&>() << std::declval<const T&>())>>
    : std::true_type {};

template <typename T>
std::string Show(const T& value) {
  if constexpr (std::is_same_v<T, bool>) {
    return value ? "true" : "false";
  } else if constexpr (std::is_same_v<T, signed char> || std::is_same_v<T, unsigned char>) {
    return std::to_string(static_cast<int>(value));
  } else if constexpr (Printable<T>::value) {
    std::ostringstream out;
    out << value;
    return out.str();
  } else {
    return "(unprintable)";
  }
}

template <typename A, typename B>
bool CheckEq(const char* file, int line, const char* a_text, const char* b_text, const A& a, const B& b,
             bool want_equal) {
  if ((a == b) == want_equal) return true;
  Fail(file, line,
       std::string(want_equal ? "CHECK_EQ(" : "CHECK_NE(") + a_text + ", " + b_text + "): " + Show(a) +
           (want_equal ? " != " : " == ") + Show(b));
  return false;
}

// Ends the process if the running test outlives the limit.
class Watchdog {
 public:
  Watchdog() : thread_([this] { Watch(); }) {}
  ~Watchdog() {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      done_ = true;
    }
    wake_.notify_all();
    thread_.join();
  }
  void Begin(const char* name) {
    std::lock_guard<std::mutex> lock(mutex_);
    name_ = name;
    deadline_ = std::chrono::steady_clock::now() + std::chrono::seconds(kTestLimitSeconds);
    wake_.notify_all();
  }

 private:
  void Watch() {
    std::unique_lock<std::mutex> lock(mutex_);
    while (!done_) {
      if (name_ != nullptr && std::chrono::steady_clock::now() >= deadline_) {
        std::cerr << "FAILED " << name_ << ": still running after " << kTestLimitSeconds
                  << " s (a hang?)" << std::endl;
        std::_Exit(2);
      }
      wake_.wait_for(lock, std::chrono::milliseconds(200));
    }
  }

  std::mutex mutex_;
  std::condition_variable wake_;
  const char* name_ = nullptr;
  std::chrono::steady_clock::time_point deadline_;
  bool done_ = false;
  std::thread thread_;
};

inline int RunAll(int argc, char** argv) {
  const char* filter = argc > 1 ? argv[1] : "";
  Watchdog watchdog;
  int ran = 0;
  for (const TestCase& test : Tests()) {
    if (std::strstr(test.name, filter) == nullptr) continue;
    ++ran;
    const int before = Failures();
    std::cerr << "[ RUN  ] " << test.name << std::endl;
    watchdog.Begin(test.name);
    const auto start = std::chrono::steady_clock::now();
    try {
      test.body();
    } catch (const Abort&) {
    } catch (const std::exception& e) {
      Fail(__FILE__, __LINE__, std::string("uncaught exception: ") + e.what());
    } catch (...) {
      Fail(__FILE__, __LINE__, "uncaught exception of unknown type");
    }
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    std::cerr << (Failures() == before ? "[   OK ] " : "[ FAIL ] ") << test.name << " (" << seconds << " s)"
              << std::endl;
  }
  if (ran == 0) {
    std::cerr << "no test matches '" << filter << "'" << std::endl;
    return 1;
  }
  std::cerr << (Failures() == 0 ? "all passed" : "FAILURES: " + std::to_string(Failures().load())) << std::endl;
  return Failures() == 0 ? 0 : 1;
}

}  // namespace elf::testing

#define TEST(name)                                                                   \
  static void name();                                                                \
  static const ::elf::testing::Registrar elf_test_registrar_##name(#name, &name); \
  static void name()

#define CHECK(cond)                                                                \
  do {                                                                             \
    if (!(cond)) ::elf::testing::Fail(__FILE__, __LINE__, "CHECK(" #cond ")"); \
  } while (0)

#define REQUIRE(cond)                                                                \
  do {                                                                               \
    if (!(cond)) {                                                                   \
      ::elf::testing::Fail(__FILE__, __LINE__, "REQUIRE(" #cond ")");              \
      throw ::elf::testing::Abort{};                                                 \
    }                                                                                \
  } while (0)

#define CHECK_EQ(a, b) ::elf::testing::CheckEq(__FILE__, __LINE__, #a, #b, (a), (b), true)
#define CHECK_NE(a, b) ::elf::testing::CheckEq(__FILE__, __LINE__, #a, #b, (a), (b), false)

// `expr` throws `Exception` (or a subclass) whose what() contains `part`.
#define CHECK_THROWS(expr, Exception, part)                                                          \
  do {                                                                                               \
    try {                                                                                            \
      (void)(expr);                                                                                  \
      ::elf::testing::Fail(__FILE__, __LINE__, "CHECK_THROWS(" #expr "): nothing thrown");           \
    } catch (const Exception& e) {                                                                   \
      if (std::string(e.what()).find(part) == std::string::npos) {                                   \
        ::elf::testing::Fail(__FILE__, __LINE__,                                                     \
                             std::string("CHECK_THROWS(" #expr "): message '") + e.what() +          \
                                 "' lacks '" + (part) + "'");                                        \
      }                                                                                              \
    } catch (const std::exception& e) {                                                              \
      ::elf::testing::Fail(__FILE__, __LINE__,                                                       \
                           std::string("CHECK_THROWS(" #expr "): wrong exception type: ") + e.what()); \
    }                                                                                                \
  } while (0)
