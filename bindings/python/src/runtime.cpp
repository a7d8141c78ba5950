#include "runtime.hpp"

#include <string>
#include <vector>

#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include "config.hpp"
#include "group.hpp"
#include "kernel.hpp"
#include "kiln/errors.hpp"
#include "request.hpp"

namespace nb = nanobind;
using namespace nb::literals;

namespace kiln::python {
namespace {

nb::object wrap(Runtime& runtime, const kiln::Kernel& handle, const std::string& name) {
  return nb::cast(Kernel{handle, runtime.signature(name), nb::borrow(nb::find(&runtime))});
}

nb::object kernel(Runtime& self, const std::string& name, nb::handle spec, nb::handle mode, nb::handle run_time,
                  nb::handle strides_of, nb::handle blocked, const nb::kwargs& values) {
  const Request request = make_request(name, spec, mode, run_time, strides_of, values, blocked);
  kiln::Kernel handle;
  {
    nb::gil_scoped_release unlocked;  // a compile takes tens of milliseconds: let other threads run
    handle = self.runtime.kernel(request.request.name, request.request.spec, request.request.mode);
  }
  return wrap(self, handle, name);
}

// A Request, or a tuple (name, spec) or (name, spec, mode).
KernelRequest request_of(nb::handle item, std::size_t index) {
  Request request;
  if (nb::try_cast(item, request, /*convert=*/false)) return request.request;
  if (PyTuple_Check(item.ptr()) && (nb::len(item) == 2 || nb::len(item) == 3)) {
    nb::tuple t = nb::borrow<nb::tuple>(item);
    nb::object mode = nb::len(t) == 3 ? nb::borrow(t[2]) : nb::cast(Mode::specialised);
    return make_request(nb::cast<std::string>(t[0]), t[1], mode, nb::tuple(), nb::none(), nb::kwargs()).request;
  }
  throw SpecError("kiln: kernels(): request " + std::to_string(index) +
                  " is neither a kiln.Request nor a tuple (name, spec[, mode])");
}

// With a group, collectively (Runtime::kernels(requests, group)): every
// member calls this, each with its own requests.
nb::list kernels(Runtime& self, nb::handle requests, nb::handle group) {
  std::vector<KernelRequest> wanted;
  for (nb::handle item : requests) wanted.push_back(request_of(item, wanted.size()));
  nb::object holder;
  Communicator* members = group.is_none() ? nullptr : &group_of(group, holder);
  std::vector<kiln::Kernel> handles;
  {
    nb::gil_scoped_release unlocked;  // also while waiting for the other members
    handles = members ? self.runtime.kernels(wanted, *members) : self.runtime.kernels(wanted);
  }
  nb::list out;
  for (std::size_t i = 0; i < handles.size(); ++i) out.append(wrap(self, handles[i], wanted[i].name));
  return out;
}

// A GPU target from its architecture's name: NVRTC's "sm_90" / "compute_90",
// hipRTC's "gfx90a"; the backend says which compiler.
GpuTarget gpu_target(const std::string& gpu, const std::string& backend) {
  if (backend != "cuda" && backend != "hip")
    throw Error("kiln: precompile(): backend must be 'cuda' or 'hip', got '" + backend + "'");
  return GpuTarget{backend == "cuda" ? GpuBackend::cuda : GpuBackend::hip, gpu};
}

std::string precompile(Runtime& self, const std::string& name, nb::handle spec, nb::handle gpu,
                       const std::string& backend, nb::handle mode, nb::handle run_time, nb::handle strides_of,
                       const nb::kwargs& values) {
  const Request request = make_request(name, spec, mode, run_time, strides_of, values);
  const KernelRequest& r = request.request;
  if (gpu.is_none()) {
    nb::gil_scoped_release unlocked;
    return self.runtime.precompile(r.name, r.spec, r.mode);
  }
  const GpuTarget target = gpu_target(nb::cast<std::string>(gpu), backend);
  nb::gil_scoped_release unlocked;
  return self.runtime.precompile(r.name, r.spec, target, r.mode);
}

nb::object metrics(const Runtime& self) {
  // Parsed from MetricsSnapshot::json(), so the dict is exactly what
  // KILN_METRICS_FILE holds (docs/metrics.schema.json).
  const std::string json = self.runtime.metrics().json();
  return nb::module_::import_("json").attr("loads")(nb::str(json.c_str(), json.size()));
}

}  // namespace

std::shared_ptr<const Signature> Runtime::signature(const std::string& name) {
  if (auto found = signatures.find(name); found != signatures.end()) return found->second;
  const KernelDeclaration declaration = runtime.declaration(name);
  auto made = std::make_shared<Signature>();
  made->kernel = declaration.name;
  for (const KernelArgument& argument : declaration.arguments) {
    made->arguments.push_back({argument.name, argument.type, argument.rank});
    if (argument.rank == 0) ++made->scalars;
  }
  return signatures.emplace(name, std::move(made)).first->second;
}

void define_runtime(nb::module_& m) {
  nb::class_<Runtime>(m, "Runtime", nb::is_weak_referenceable(),
                      "Kernels by name: specialised on request, compiled once, cached on disk.\n\n"
                      "Runtime(**settings) takes kiln::Config's fields by name (cache_dir, threads,\n"
                      "metrics_file, ...; see Runtime.config) over the KILN_* variables. A Runtime\n"
                      "lives as long as a Kernel or Bound it made does.")
      .def(
          "__init__",
          [](Runtime* self, const nb::kwargs& settings) {
            Config config = config_from(settings);
            new (self) Runtime(std::move(config));
          },
          "settings"_a, nb::sig("def __init__(self, **settings: object) -> None"))
      .def("kernel", &kernel, "name"_a, "spec"_a = nb::none(), nb::kw_only(), "mode"_a = Mode::specialised,
           "run_time"_a = nb::tuple(), "strides_of"_a = nb::none(), "blocked"_a = nb::none(), "values"_a,
           nb::sig("def kernel(self, name: str, spec: dict[str, object] | None = None, *, "
                   "mode: Mode | str = 'specialised', run_time: str | collections.abc.Iterable[str] = (), "
                   "strides_of: dict[str, object] | None = None, blocked: dict[str, object] | None = None, "
                   "**values: object) -> Kernel"),
           "The kernel `name` specialised on `spec` and `values` (domain and static\n"
           "parameters: bool, int or float; an array's strides as a tuple, in elements).\n"
           "run_time: parameters read at run time instead of compiled in (one binary for\n"
           "all their values). strides_of: {array name: example array} fixes those arrays'\n"
           "strides to the examples'. blocked: {array name: nproma, or an example array\n"
           "(nproma, ..., nblks)}: ICON's blocked layout; calls then pass such arrays.\n"
           "mode: Mode.generic reads every value at run time.\n"
           "From memory, the disk cache, or the compiler (the GIL is released meanwhile).\n"
           "Raises UnknownKernelError, SpecError, CompileError, ToolchainError.")
      .def("precompile", &precompile, "name"_a, "spec"_a = nb::none(), nb::kw_only(), "gpu"_a = nb::none(),
           "backend"_a = "cuda", "mode"_a = Mode::specialised, "run_time"_a = nb::tuple(),
           "strides_of"_a = nb::none(), "values"_a,
           nb::sig("def precompile(self, name: str, spec: dict[str, object] | None = None, *, "
                   "gpu: str | None = None, backend: str = 'cuda', mode: Mode | str = 'specialised', "
                   "run_time: str | collections.abc.Iterable[str] = (), "
                   "strides_of: dict[str, object] | None = None, **values: object) -> str"),
           "Compiles kernel `name` into the cache (or finds it there) without loading it;\n"
           "returns its cache key (32 hex digits). gpu: an architecture, \"sm_90\" (a CUBIN)\n"
           "or \"compute_90\" (PTX) for backend \"cuda\" (NVRTC), \"gfx90a\" for \"hip\"\n"
           "(hipRTC): no GPU or driver is needed. gpu=None: the CPU target (target_cpu).\n"
           "The other arguments are kernel()'s. The binary is the payload of the cache\n"
           "entry <cache_dir>/<key[:2]>/<key[2:]> (docs/manual/cache.md). Raises\n"
           "ToolchainError without the GPU compiler, CompileError with its log, Error for\n"
           "an architecture it does not support, SpecError, UnknownKernelError.")
      .def("kernels", &kernels, "requests"_a, "group"_a = nb::none(),
           nb::sig("def kernels(self, requests: collections.abc.Iterable[Request | tuple], /, "
                   "group: object | None = None) -> list[Kernel]"),
           "Many kernels at once, in the order asked: kiln.Request objects or tuples\n"
           "(name, spec[, mode]). Misses compile in parallel (Config build_threads).\n"
           "group: an mpi4py communicator (or a kiln.Communicator): resolved collectively,\n"
           "a call every member makes, each with its own requests; each distinct\n"
           "specialisation is compiled by one member, and an error on any member is\n"
           "raised, as the same class, on all (docs/manual/mpi.md). Raises ImportError\n"
           "when this kiln was built without MPI.")
      // A name registered again with a new text may declare other arguments:
      // its signature is read again (Kernels made before keep theirs).
      .def("register_kernel", [](Runtime& self, const std::string& text, const std::string& file_name) {
             std::string name = self.runtime.register_kernel(text, file_name);
             self.signatures.erase(name);
             return name;
           },
           "text"_a, "file_name"_a = "<user kernel>",
           "Adds a kernel from its text (the kernel format); returns its name. A name\n"
           "registered again: the same text changes nothing, a new text replaces the\n"
           "kernel for later requests (Kernels made before keep theirs). Raises\n"
           "KernelSourceError when the text is malformed or names an embedded kernel.")
      .def("register_kernel_file", [](Runtime& self, const std::string& path) {
             std::string name = self.runtime.register_kernel_file(path);
             self.signatures.erase(name);
             return name;
           },
           "path"_a, "Adds a kernel from a file; returns its name.")
      .def("kernel_names", [](const Runtime& self) { return self.runtime.kernel_names(); },
           "Every registered kernel's name.")
      .def("declaration", [](const Runtime& self, const std::string& name) { return self.runtime.declaration(name); },
           "name"_a, "What kernel `name` declares. Raises UnknownKernelError.")
      .def("wait_for_specialised",
           [](Runtime& self) {
             nb::gil_scoped_release unlocked;  // a compile may be running: let other threads run
             self.runtime.wait_for_specialised();
           },
           "Tiered start (Runtime(tiered=True)): returns when every specialised build\n"
           "queued so far has replaced its generic build, or failed (the log says why).\n"
           "For tests and benchmarks: calls never need it.")
      .def("metrics", &metrics, nb::sig("def metrics(self) -> dict[str, typing.Any]"),
           "The init-vs-run metrics as a dict, the same as the JSON of KILN_METRICS_FILE.")
      .def_prop_ro("config", [](const Runtime& self) { return config_dict(self.runtime.config()); },
                   nb::sig("def config(self) -> dict[str, typing.Any]"),
                   "The settings this Runtime runs with, by the names Runtime() takes.");
}

}  // namespace kiln::python
