// elfpy._elf: the engine's Python binding. No logic of its own: it converts
// arguments, exposes batch buffers as numpy views (their base is the Context,
// which keeps the memory alive), and releases the GIL while waiting.
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <cstring>
#include <stdexcept>
#include <string>

#include "elf/context.h"
#include "elf/registry.h"
#include "elf/remote.h"

namespace py = pybind11;

namespace {

elf::DType ParseDType(const std::string& name) {
  for (auto dtype : {elf::DType::kFloat32, elf::DType::kFloat64, elf::DType::kInt32, elf::DType::kInt64,
                     elf::DType::kUint8, elf::DType::kBool}) {
    if (elf::Name(dtype) == name) return dtype;
  }
  throw std::invalid_argument("unsupported dtype '" + name +
                              "'; use float32, float64, int32, int64, uint8 or bool");
}

std::string RoleName(elf::KeyRole role) {
  switch (role) {
    case elf::KeyRole::kObservation: return "observation";
    case elf::KeyRole::kAction: return "action";
    case elf::KeyRole::kEngine: return "engine";
    case elf::KeyRole::kExtra: return "extra";
    case elf::KeyRole::kStatistic: return "statistic";
  }
  return "unknown";
}

elf::KeyRole ParseRole(const std::string& name) {
  for (auto role : {elf::KeyRole::kObservation, elf::KeyRole::kAction, elf::KeyRole::kEngine, elf::KeyRole::kExtra,
                    elf::KeyRole::kStatistic}) {
    if (RoleName(role) == name) return role;
  }
  throw std::invalid_argument("unknown key role '" + name + "'");
}

const char* const kSpaceNames[] = {"none", "discrete", "multi_discrete", "box"};

// An action space as (kind, nvec, low, high); None for other keys.
py::object SpaceTuple(const elf::ActionSpace& space) {
  if (space.kind == elf::ActionSpace::Kind::kNone) return py::none();
  return py::make_tuple(kSpaceNames[static_cast<int>(space.kind)], space.nvec, space.low, space.high);
}

elf::ActionSpace ParseSpace(const py::tuple& t) {
  const auto name = t[0].cast<std::string>();
  for (int kind = 1; kind < 4; ++kind) {
    if (name == kSpaceNames[kind]) {
      return {static_cast<elf::ActionSpace::Kind>(kind), t[1].cast<std::vector<int64_t>>(),
              t[2].cast<std::vector<double>>(), t[3].cast<std::vector<double>>()};
    }
  }
  throw std::invalid_argument("unknown action space '" + name + "'");
}

// The inverse of KeyDict ("space" is optional: without it, an action's space
// follows from its dtype, shape and bounds).
elf::KeySpec ParseKey(const py::dict& d) {
  elf::KeySpec key{d["name"].cast<std::string>(), ParseDType(d["dtype"].cast<std::string>()),
                   d["shape"].cast<std::vector<int64_t>>(), d["meaning"].cast<std::string>(),
                   ParseRole(d["role"].cast<std::string>()), std::nullopt};
  if (!d["bounds"].is_none()) key.bounds = d["bounds"].cast<std::pair<double, double>>();
  if (d.contains("space") && !d["space"].is_none()) key.space = ParseSpace(d["space"].cast<py::tuple>());
  return key;
}

py::dict KeyDict(const elf::KeySpec& key) {
  py::dict d;
  d["name"] = key.name;
  d["dtype"] = elf::Name(key.dtype);
  d["shape"] = py::tuple(py::cast(key.shape));
  d["meaning"] = key.meaning;
  d["role"] = RoleName(key.role);
  d["bounds"] = key.bounds ? py::object(py::make_tuple(key.bounds->first, key.bounds->second)) : py::none();
  d["space"] = SpaceTuple(key.space);
  return d;
}

// A numpy view of `bytes` owned by the context `self`.
py::array View(py::object self, elf::DType dtype, std::vector<py::ssize_t> shape, void* data) {
  return py::array(py::dtype(elf::Name(dtype)), shape, data, self);
}

elf::Context& Ctx(py::object& self) { return self.cast<elf::Context&>(); }

// numpy's dtype object for a DType. Made once and kept (never freed: they
// live as long as numpy); numpy's built-in dtypes are singletons, so an array
// of the key's type holds this very object.
PyObject* NumpyDType(elf::DType dtype) {
  static PyObject* const dtypes[] = {
      py::dtype(elf::Name(elf::DType::kFloat32)).release().ptr(),
      py::dtype(elf::Name(elf::DType::kFloat64)).release().ptr(),
      py::dtype(elf::Name(elf::DType::kInt32)).release().ptr(),
      py::dtype(elf::Name(elf::DType::kInt64)).release().ptr(),
      py::dtype(elf::Name(elf::DType::kUint8)).release().ptr(),
      py::dtype(elf::Name(elf::DType::kBool)).release().ptr(),
  };
  return dtypes[static_cast<int>(dtype)];
}

// The batch of a (tag, batch, buffer, size) tuple, as wait() returns it.
elf::BatchRef RefOf(py::handle ref) {
  if (!PyTuple_Check(ref.ptr()) || PyTuple_GET_SIZE(ref.ptr()) != 4) {
    throw std::invalid_argument("a batch reference is a (tag, batch, buffer, size) tuple");
  }
  auto item = [&](Py_ssize_t i) { return PyLong_AsLongLong(PyTuple_GET_ITEM(ref.ptr(), i)); };
  const elf::BatchRef batch{static_cast<int>(item(0)), item(1), static_cast<int>(item(2)), static_cast<int>(item(3))};
  if (PyErr_Occurred()) throw py::error_already_set();
  return batch;
}

// Copies a reply that is a plain dict holding exactly the tag's reply keys,
// each a C-contiguous numpy array of the key's dtype and shape [size, ...],
// into the reply buffers of the batch's buffer, and returns true. Returns false, having
// written nothing, for any other reply: the caller converts and checks that
// one itself (with errors naming the tag and key).
bool CopyPlainReplies(elf::Context& ctx, const elf::BatchRef& ref, py::handle replies) {
  if (ref.tag < 0 || ref.tag >= ctx.num_tags()) throw std::out_of_range("no tag " + std::to_string(ref.tag));
  elf::Tag& tag = ctx.tag(ref.tag);
  const int size = ref.size;
  if (ref.buffer < 0 || ref.buffer >= tag.num_buffers() || size < 0 || size > tag.capacity()) {
    throw std::out_of_range("tag '" + tag.name() + "' has no buffer " + std::to_string(ref.buffer) + " of " +
                            std::to_string(size) + " rows");
  }
  const std::vector<int>& reply_keys = tag.reply_keys();
  if (!PyDict_CheckExact(replies.ptr()) ||
      PyDict_Size(replies.ptr()) != static_cast<Py_ssize_t>(reply_keys.size())) {
    return false;
  }
  std::vector<py::array> arrays;
  arrays.reserve(reply_keys.size());
  for (int key_index : reply_keys) {
    const elf::KeySpec& key = ctx.keys()[key_index];
    PyObject* value = PyDict_GetItemString(replies.ptr(), key.name.c_str());  // borrowed
    if (value == nullptr || !py::isinstance<py::array>(value)) return false;
    auto array = py::reinterpret_borrow<py::array>(value);
    if (array.dtype().ptr() != NumpyDType(key.dtype) || (array.flags() & py::array::c_style) == 0 ||
        array.ndim() != static_cast<py::ssize_t>(key.shape.size()) + 1 || array.shape(0) != size) {
      return false;
    }
    for (std::size_t d = 0; d < key.shape.size(); ++d) {
      if (array.shape(static_cast<py::ssize_t>(d) + 1) != key.shape[d]) return false;
    }
    arrays.push_back(std::move(array));
  }
  elf::BatchBuffer& b = tag.buffer(ref.buffer);
  for (std::size_t i = 0; i < arrays.size(); ++i) {
    // memmove: a caller may hand back an array over the buffer itself.
    std::memmove(b.replies.at(i).data(), arrays[i].data(), size * ctx.keys()[reply_keys[i]].Bytes());
  }
  return true;
}

}  // namespace

PYBIND11_MODULE(_elf, m) {
  m.doc() = "The ELF engine: games stepped by a pool of C++ threads, batched by tag.";
  py::register_exception<elf::GameError>(m, "GameError", PyExc_RuntimeError);

  m.def("games", [] { return elf::Registry::Global().Names(); }, "Names of the registered games.");
  m.def(
      "game_options",
      [](const std::string& game) {
        py::list options;
        for (const auto& option : elf::Registry::Global().Spec(game, elf::Options()).options) {
          options.append(py::make_tuple(option.name, option.fallback, option.help));
        }
        return options;
      },
      "(name, default, help) of each option of a game.");

  py::class_<elf::RemoteBoard, std::shared_ptr<elf::RemoteBoard>>(
      m, "RemoteBoard", "The shared-memory block through which worker processes host games.")
      .def(py::init([](const std::vector<py::dict>& keys, int num_games, int num_workers, double step_timeout_s,
                       int num_seats) {
             std::vector<elf::KeySpec> specs;
             for (const auto& key : keys) specs.push_back(ParseKey(key));
             return std::make_shared<elf::RemoteBoard>(std::move(specs), num_games, num_workers, step_timeout_s,
                                                       num_seats);
           }),
           py::arg("keys"), py::arg("num_games"), py::arg("num_workers"), py::arg("step_timeout_s") = 0.0,
           py::arg("num_seats") = 1,
           "step_timeout_s > 0: a request (a step, or a first reset once its worker is ready) whose result is "
           "that late fails the engine (0: no limit). num_seats: "
           "agents per game (each seat's keys, reward and outcome have their own slots).")
      .def("bytes", &elf::RemoteBoard::bytes)
      .def("regions",
           [](const elf::RemoteBoard& board) {
             py::dict regions;
             for (const auto& [name, region] : board.regions()) regions[py::str(name)] = py::make_tuple(region.offset, region.stride);
             return regions;
           },
           "name -> (byte offset, stride) of every region.")
      .def_property_readonly("num_games", &elf::RemoteBoard::num_games)
      .def_property_readonly("num_workers", &elf::RemoteBoard::num_workers)
      .def_property_readonly("num_seats", &elf::RemoteBoard::num_seats)
      .def("first_game", &elf::RemoteBoard::FirstGame)
      .def(
          "attach",
          [](elf::RemoteBoard& board, py::buffer memory) {
            py::buffer_info info = memory.request(true);
            if (static_cast<std::size_t>(info.size * info.itemsize) < board.bytes()) {
              throw std::invalid_argument("shared block too small for the board");
            }
            board.Attach(static_cast<uint8_t*>(info.ptr));
          },
          py::keep_alive<1, 2>(), "Points the board at a writable shared block of bytes() bytes.")
      .def("ready", &elf::RemoteBoard::Ready, py::arg("worker"),
           "Worker side: the worker serves from now on (its games' first resets are timed from here).")
      .def("await_work", &elf::RemoteBoard::AwaitWork, py::call_guard<py::gil_scoped_release>(),
           py::arg("worker"), py::arg("timeout_ms"))
      .def("finish", &elf::RemoteBoard::Finish, py::arg("game"), py::arg("reward"), py::arg("terminated"),
           py::arg("truncated"))
      .def("finish_seats", &elf::RemoteBoard::FinishSeats, py::arg("game"), py::arg("rewards"),
           py::arg("seat_status"), py::arg("terminated"), py::arg("truncated"),
           "Finishes a step of a game with several seats: each seat's reward and status (a seat that left "
           "while the game goes on: 1 terminated, 2 truncated), and the game's own outcome.")
      .def("fail", &elf::RemoteBoard::Fail, py::arg("game"), py::arg("message"))
      .def(
          "finish_many",
          [](elf::RemoteBoard& board, py::array_t<int32_t, py::array::c_style | py::array::forcecast> games,
             py::array_t<float, py::array::c_style | py::array::forcecast> rewards,
             py::array_t<uint8_t, py::array::c_style | py::array::forcecast> status) {
            if (games.ndim() != 1 || rewards.ndim() != 1 || status.ndim() != 1 || rewards.size() != games.size() ||
                status.size() != games.size()) {
              throw std::invalid_argument("finish_many: games, rewards and status must be 1-D arrays of one length");
            }
            const int32_t* game_data = games.data();
            const float* reward_data = rewards.data();
            const uint8_t* status_data = status.data();
            py::gil_scoped_release release;
            board.FinishMany(game_data, reward_data, status_data, static_cast<std::size_t>(games.size()));
          },
          py::arg("games"), py::arg("rewards"), py::arg("status"),
          "Finishes the steps of many games of a one-seat board: each its reward and status "
          "(1 terminated, 2 truncated).")
      .def("pending", &elf::RemoteBoard::Pending, py::arg("game"),
           "Whether the game's last request is not finished yet.")
      .def("requests", &elf::RemoteBoard::Requests, py::arg("game"),
           "How many requests the game was sent, its first reset included.")
      .def("close", &elf::RemoteBoard::Close)
      .def("closing", &elf::RemoteBoard::closing);

  py::class_<elf::Context>(m, "Context")
      .def(py::init([](const std::string& game, int num_games, int num_threads, uint64_t seed, bool deterministic,
                       const std::map<std::string, std::string>& options) {
             return std::make_unique<elf::Context>(game, num_games, num_threads, seed, deterministic,
                                                   elf::Options(options));
           }),
           py::arg("game"), py::arg("num_games"), py::arg("num_threads"), py::arg("seed"),
           py::arg("deterministic"), py::arg("options"))
      .def(py::init([](const std::string& name, std::shared_ptr<elf::RemoteBoard> board, int num_threads,
                       uint64_t seed, bool deterministic) {
             elf::GameSpec spec;
             spec.keys = board->keys();
             spec.steps_elsewhere = true;
             spec.num_seats = board->num_seats();
             auto make = [board](int index) { return std::make_unique<elf::RemoteGame>(board, index); };
             return std::make_unique<elf::Context>(name, std::move(spec), make, board->num_games(), num_threads,
                                                   seed, deterministic);
           }),
           py::arg("name"), py::arg("board"), py::arg("num_threads"), py::arg("seed"), py::arg("deterministic"),
           py::keep_alive<1, 3>(), "A context over games hosted in worker processes through `board`.")
      .def("keys",
           [](elf::Context& ctx) {
             py::list keys;
             for (const auto& key : ctx.keys()) keys.append(KeyDict(key));
             return keys;
           })
      .def("num_seats", &elf::Context::num_seats)
      .def("add_key",
           [](elf::Context& ctx, const std::string& name, const std::string& dtype, std::vector<int64_t> shape,
              const std::string& meaning) {
             ctx.AddKey({name, ParseDType(dtype), std::move(shape), meaning, elf::KeyRole::kExtra, std::nullopt});
           })
      .def("add_tag",
           [](elf::Context& ctx, const std::string& name, int batch_size, std::vector<std::string> inputs,
              std::vector<std::string> replies, int T, int timeout_ms, int min_batch, std::vector<int> seats) {
             return ctx.AddTag({name, batch_size, std::move(inputs), std::move(replies), T, timeout_ms, min_batch,
                                std::move(seats)});
           })
      .def("defer_resets", &elf::Context::DeferResets)
      .def("tag_index", &elf::Context::TagIndex)
      .def("tag_info",
           [](elf::Context& ctx, int index) {
             elf::Tag& tag = ctx.tag(index);
             py::dict d;
             d["name"] = tag.name();
             d["T"] = tag.T();
             d["batch_size"] = tag.config().batch_size;
             d["capacity"] = tag.capacity();
             d["num_buffers"] = tag.num_buffers();
             d["inputs"] = tag.config().inputs;
             d["replies"] = tag.config().replies;
             return d;
           })
      .def("start", &elf::Context::Start)
      .def(
          "wait",
          [](elf::Context& ctx, int timeout_ms) -> py::object {
            std::optional<elf::BatchRef> ref;
            {
              py::gil_scoped_release release;
              ref = ctx.Wait(timeout_ms);
            }
            if (!ref) return py::none();
            return py::make_tuple(ref->tag, ref->batch, ref->buffer, ref->size);
          },
          "Next batch as (tag, batch, buffer, size), or None after timeout_ms.")
      .def("input_array",
           [](py::object self, int tag_index, int buffer, int input) {
             elf::Tag& tag = Ctx(self).tag(tag_index);
             const elf::KeySpec& key = Ctx(self).keys()[tag.input_keys().at(input)];
             std::vector<py::ssize_t> shape;
             if (tag.T() > 1) shape.push_back(tag.T());
             shape.push_back(tag.capacity());
             shape.insert(shape.end(), key.shape.begin(), key.shape.end());
             return View(self, key.dtype, shape, tag.buffer(buffer).inputs.at(input).data());
           })
      .def("reply_array",
           [](py::object self, int tag_index, int buffer, int reply) {
             elf::Tag& tag = Ctx(self).tag(tag_index);
             const elf::KeySpec& key = Ctx(self).keys()[tag.reply_keys().at(reply)];
             std::vector<py::ssize_t> shape{tag.capacity()};
             shape.insert(shape.end(), key.shape.begin(), key.shape.end());
             return View(self, key.dtype, shape, tag.buffer(buffer).replies.at(reply).data());
           })
      .def("row_arrays",
           [](py::object self, int tag_index, int buffer) {
             elf::Tag& tag = Ctx(self).tag(tag_index);
             elf::BatchBuffer& b = tag.buffer(buffer);
             const std::vector<py::ssize_t> shape{tag.capacity()};
             return py::make_tuple(View(self, elf::DType::kInt32, shape, b.game_ids.data()),
                                   View(self, elf::DType::kInt32, shape, b.seats.data()));
           },
           "(game_ids, seats) views of a buffer's rows.")
      .def("submit_replies",
           [](elf::Context& ctx, int tag, int64_t batch, int buffer, int size) {
             py::gil_scoped_release release;
             ctx.SubmitReplies({tag, batch, buffer, size});
           })
      .def(
          "submit_plain_replies",
          [](elf::Context& ctx, py::handle ref, py::handle replies) {
            const elf::BatchRef batch = RefOf(ref);
            if (!CopyPlainReplies(ctx, batch, replies)) return false;
            py::gil_scoped_release release;
            ctx.SubmitReplies(batch);
            return true;
          },
          "submit_replies(*ref) for the common reply, copied here in one call: a dict of exactly the tag's "
          "reply keys, each a C-contiguous numpy array of its dtype and shape [size, ...]. False, with nothing "
          "written or submitted, for any other reply. `ref` is the tuple wait() returned (taken whole: "
          "converting four int arguments would cost more than the copy).")
      .def(
          "submit_plain_replies_and_wait",
          [](elf::Context& ctx, py::handle ref, py::handle replies, int timeout_ms) -> py::object {
            const elf::BatchRef batch = RefOf(ref);
            if (!CopyPlainReplies(ctx, batch, replies)) return py::bool_(false);
            std::optional<elf::BatchRef> next;
            {
              py::gil_scoped_release release;
              ctx.SubmitReplies(batch);
              next = ctx.Wait(timeout_ms);
            }
            if (!next) return py::none();
            return py::make_tuple(next->tag, next->batch, next->buffer, next->size);
          },
          "submit_plain_replies, then wait: the next batch's (tag, batch, buffer, size), None if none came "
          "within timeout_ms (the replies were submitted), False if the reply is not plain (nothing done).")
      .def("release",
           [](elf::Context& ctx, int tag, int64_t batch, int buffer, int size) {
             py::gil_scoped_release release;
             ctx.Release({tag, batch, buffer, size});
           })
      .def("handoffs",
           [](const elf::Context& ctx) {
             const elf::Context::Handoffs counts = ctx.handoffs();
             py::dict d;
             d["worker_wakeups"] = counts.worker_wakeups;
             d["caller_sleeps"] = counts.caller_sleeps;
             d["batches_stepped_by_caller"] = counts.batches_stepped_by_caller;
             d["batches_given_to_pool"] = counts.batches_given_to_pool;
             d["batches_closed_stalled"] = counts.batches_closed_stalled;
             d["wake_latency_ns"] = counts.wake_latency_ns;
             return d;
           },
           "Hand-offs between threads so far (see Context::handoffs).")
      .def("fail", &elf::Context::Fail)
      .def("stop", &elf::Context::Stop, py::call_guard<py::gil_scoped_release>());
}
