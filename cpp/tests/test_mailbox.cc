// Mailbox: batches posted by worker threads reach the waiting caller, the
// first failure or a stop wakes it and ends every later wait, and a poll that
// finds nothing can ever come fails the mailbox with its reason.
#include "elf/mailbox.h"

#include <chrono>
#include <deque>
#include <optional>
#include <stdexcept>
#include <thread>

#include "check.h"

using elf::BatchRef;
using elf::GameError;
using elf::Mailbox;

namespace {

// Takes the oldest posted batch.
Mailbox::Poll TakeFront(std::deque<BatchRef>& ready) {
  Mailbox::Poll found;
  if (!ready.empty()) {
    found.ref = ready.front();
    ready.pop_front();
  }
  return found;
}

Mailbox::Clock::time_point In(int ms) { return Mailbox::Clock::now() + std::chrono::milliseconds(ms); }

// A deadline no test reaches (a day): a wait that an event should end either
// ends or hangs, and the watchdog names a hung test. No test bounds how long
// another thread takes to act, so a loaded machine cannot fail one.
Mailbox::Clock::time_point Never() { return Mailbox::Clock::now() + std::chrono::hours(24); }

}  // namespace

TEST(a_batch_posted_by_another_thread_wakes_the_waiter_and_counts_as_held) {
  Mailbox mailbox;
  std::thread worker([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    mailbox.Post({1, 7, 0, 32});
  });
  const auto ref = mailbox.Wait(Never(), TakeFront);
  worker.join();
  REQUIRE(ref.has_value());
  CHECK_EQ(ref->tag, 1);
  CHECK_EQ(ref->batch, int64_t{7});
  CHECK_EQ(ref->size, 32);
  CHECK_EQ(mailbox.held(), 1);
  mailbox.HandedBack();
  CHECK_EQ(mailbox.held(), 0);
}

TEST(wait_returns_nothing_at_its_deadline) {
  Mailbox mailbox;
  const auto deadline = In(30);
  CHECK(!mailbox.Wait(deadline, TakeFront).has_value());
  CHECK(Mailbox::Clock::now() >= deadline);  // not before it (load can only make it later)
}

TEST(the_poll_decides_what_is_delivered_and_when_to_look_again) {
  Mailbox mailbox;
  mailbox.Post({0, 5, 0, 1});
  int polls = 0;
  // Delivers nothing until the third look; asks to be woken every 5 ms.
  const auto ref = mailbox.Wait(Never(), [&](std::deque<BatchRef>& ready) {
    Mailbox::Poll found;
    if (++polls == 3) found.ref = ready.front();
    found.wake = In(5);
    return found;
  });
  REQUIRE(ref.has_value());
  CHECK_EQ(polls, 3);
  CHECK_EQ(ref->batch, int64_t{5});
}

TEST(the_first_failure_wakes_the_waiter_and_every_later_wait_throws_it) {
  Mailbox mailbox;
  std::thread worker([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    mailbox.Fail("game 3 ('counter'): boom");
    mailbox.Fail("a later failure");
  });
  CHECK_THROWS(mailbox.Wait(Never(), TakeFront), GameError, "game 3 ('counter'): boom");
  worker.join();
  CHECK(mailbox.halted());
  mailbox.Post({0, 0, 0, 1});
  CHECK_THROWS(mailbox.Wait(In(0), TakeFront), GameError, "boom");
}

TEST(stop_wakes_the_waiter_once) {
  Mailbox mailbox;
  CHECK(!mailbox.halted());
  std::thread worker([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    CHECK(mailbox.Stop());
  });
  CHECK_THROWS(mailbox.Wait(Never(), TakeFront), std::logic_error, "stopped");
  worker.join();
  CHECK(mailbox.stopped() && mailbox.halted());
  CHECK(!mailbox.Stop());
}

TEST(a_stuck_poll_fails_the_mailbox_with_its_reason) {
  Mailbox mailbox;
  auto stuck = [](std::deque<BatchRef>&) {
    Mailbox::Poll found;
    found.stuck = "stuck: tag 'actor' can never fill";
    return found;
  };
  CHECK_THROWS(mailbox.Wait(Never(), stuck), GameError, "tag 'actor' can never fill");
  CHECK(mailbox.halted());
  CHECK_THROWS(mailbox.Wait(In(0), TakeFront), GameError, "can never fill");
}

int main(int argc, char** argv) { return elf::testing::RunAll(argc, argv); }
