"""recur for Python, shaped like onnxruntime's InferenceSession.

    import recur as ort            # instead of: import onnxruntime as ort
    sess = ort.InferenceSession("model.onnx", providers=["CPUExecutionProvider"])
    outputs = sess.run(None, {"x": x})

Beyond onnxruntime: InferenceSession.explain() (where each node runs, and why the providers
before it declined) and InferenceSession.assignment() (the same as data). Errors are
recur.Error, a RuntimeError subclass whose .code is a recur.ErrorCode.
"""
import collections.abc
import enum
import operator
import os
import time

from ._recur import Error, ErrorCode, RunOptions as _RunOptions, Session as _Session
from ._recur import list_providers as _list_providers

Error.__module__ = "recur"  # shown as recur.Error in tracebacks
ErrorCode.__module__ = "recur"

try:
    from ._recur import __version__
except ImportError:  # a library built without a version string
    __version__ = "unknown"

__all__ = [
    "Error",
    "ErrorCode",
    "ExecutionMode",
    "GraphOptimizationLevel",
    "InferenceSession",
    "ModelMetadata",
    "NodeArg",
    "SessionOptions",
    "RunOptions",
    "get_available_providers",
    "get_all_providers",
    "get_device",
    "set_seed",
    "__version__",
]

# onnxruntime's provider names, for code written against it. The CPU one means every CPU
# provider of recur (oneDNN where built, then the reference), the CUDA one both GPU ones.
_ORT_PROVIDERS = {
    "CPUExecutionProvider": ["onednn", "reference"],
    "DnnlExecutionProvider": ["onednn"],
    "CUDAExecutionProvider": ["cudnn", "cuda-generic"],
}

# onnxruntime's type strings ("tensor(float)") for recur's dtype names.
_ORT_TYPES = {
    "float32": "float",
    "float64": "double",
}


def _type_string(dtype, element_dtype, key_dtype="undefined", value_dtype="undefined"):
    def tensor(t):
        return "tensor(%s)" % _ORT_TYPES.get(t, t)

    map_type = "map(%s,%s)" % (key_dtype, tensor(value_dtype))
    if dtype == "map":
        return map_type
    if dtype == "sequence":
        return "seq(%s)" % (map_type if element_dtype == "map" else tensor(element_dtype))
    return tensor(dtype)


class NodeArg:
    """A model input or output: name, type ("tensor(float)") and shape, whose entries are
    ints, strings for symbolic dimensions, or None where unknown (shape is None when even the
    rank is unknown)."""

    def __init__(self, name, dtype, shape, element_dtype="undefined", has_default=False,
                 key_dtype="undefined", value_dtype="undefined"):
        self.name = name
        self.type = _type_string(dtype, element_dtype, key_dtype, value_dtype)
        self.shape = shape
        self.dtype = dtype  # recur's (numpy's) spelling: "float32"
        self.has_default = has_default

    def __repr__(self):
        return "NodeArg(name=%r, type=%r, shape=%r)" % (self.name, self.type, self.shape)


class GraphOptimizationLevel(enum.IntEnum):
    """onnxruntime's levels, with its values. recur has two: ORT_DISABLE_ALL runs the graph as
    loaded, and every other level applies all of recur's rewrites."""
    ORT_DISABLE_ALL = 0
    ORT_ENABLE_BASIC = 1
    ORT_ENABLE_EXTENDED = 2
    ORT_ENABLE_LAYOUT = 3
    ORT_ENABLE_ALL = 99


class ExecutionMode(enum.IntEnum):
    """onnxruntime's execution modes. recur runs a graph's nodes one after another either way,
    each with its own threads."""
    ORT_SEQUENTIAL = 0
    ORT_PARALLEL = 1


_default_seed = None


def set_seed(seed):
    """As onnxruntime.set_seed: the random operators' seed for sessions created afterwards whose
    SessionOptions.random_seed is None."""
    global _default_seed
    _default_seed = _seed(seed)


class SessionOptions:
    """onnxruntime's SessionOptions, plus recur's own settings.

    Used: intra_op_num_threads, graph_optimization_level (or recur's
    enable_graph_optimizations), enable_profiling, profile_file_prefix and
    use_deterministic_compute (recur's deterministic sessions: no choice made by timing, so
    that two sessions give the same bits). Accepted and changing nothing:
    inter_op_num_threads, execution_mode, execution_order, enable_cpu_mem_arena,
    enable_mem_pattern, enable_mem_reuse, optimized_model_filepath (recur writes no optimized
    model), log_severity_level, log_verbosity_level, logid and session config entries.
    recur's own: settings (provider settings {"<provider>.<key>": "value"}) and random_seed
    (None: every run draws anew).
    Any other attribute is an AttributeError, as in onnxruntime: a misspelt option
    (intra_op_num_thread) would otherwise be a new attribute that nothing reads."""

    __slots__ = ("intra_op_num_threads", "enable_graph_optimizations", "settings", "random_seed",
                 "enable_profiling", "profile_file_prefix", "use_deterministic_compute",
                 "inter_op_num_threads", "execution_mode", "execution_order",
                 "enable_cpu_mem_arena", "enable_mem_pattern", "enable_mem_reuse",
                 "optimized_model_filepath", "log_severity_level", "log_verbosity_level",
                 "logid", "_config")

    def __init__(self):
        self.intra_op_num_threads = 0
        self.enable_graph_optimizations = True  # recur: SessionOptions::optimize
        self.settings = {}
        self.random_seed = None
        self.enable_profiling = False
        self.profile_file_prefix = "onnxruntime_profile_"
        self.use_deterministic_compute = False
        self.execution_order = 0  # onnxruntime's ExecutionOrder.DEFAULT
        self.enable_cpu_mem_arena = True
        self.enable_mem_pattern = True
        self.enable_mem_reuse = True
        self.optimized_model_filepath = ""
        self.inter_op_num_threads = 0
        self.execution_mode = ExecutionMode.ORT_SEQUENTIAL
        self.log_severity_level = 2
        self.log_verbosity_level = 0
        self.logid = ""
        self._config = {}

    @property
    def graph_optimization_level(self):
        return (GraphOptimizationLevel.ORT_ENABLE_ALL if self.enable_graph_optimizations
                else GraphOptimizationLevel.ORT_DISABLE_ALL)

    @graph_optimization_level.setter
    def graph_optimization_level(self, level):
        level = GraphOptimizationLevel(level)  # ValueError for a level onnxruntime lacks
        self.enable_graph_optimizations = level != GraphOptimizationLevel.ORT_DISABLE_ALL

    def add_session_config_entry(self, key, value):
        self._config[str(key)] = str(value)

    def get_session_config_entry(self, key):
        if str(key) not in self._config:
            raise KeyError("SessionOptions has no config entry %r" % key)
        return self._config[str(key)]


class RunOptions:
    """onnxruntime's RunOptions. Setting terminate to True, from any thread, before or during a
    run given these options, ends the run with recur.Error (code CANCELLED); set it back to
    False for later runs. recur adds timeout_ms (each run's limit from its start; 0: none) and
    cancellable (terminate then takes effect within milliseconds even inside a long RNN node,
    which runs in blocks of time steps; a timeout implies it). log_severity_level,
    log_verbosity_level, logid, and only_execute_path_to_fetches (recur always runs only what
    the requested outputs need) are accepted and change nothing, as are run config entries.
    Any other attribute is an AttributeError, as in onnxruntime."""

    __slots__ = ("_options", "log_severity_level", "log_verbosity_level", "logid",
                 "only_execute_path_to_fetches", "_config")

    def __init__(self):
        self._options = _RunOptions()
        self.log_severity_level = 2
        self.log_verbosity_level = 0
        self.logid = ""
        self.only_execute_path_to_fetches = False
        self._config = {}

    terminate = property(lambda self: self._options.terminate,
                         lambda self, on: setattr(self._options, "terminate", bool(on)))
    @property
    def timeout_ms(self):
        return self._options.timeout_ms

    @timeout_ms.setter
    def timeout_ms(self, ms):
        ms = float(ms)
        if not ms >= 0:
            raise ValueError("timeout_ms must be a number of milliseconds >= 0 (0: none), not %r"
                             % ms)
        self._options.timeout_ms = ms
    cancellable = property(lambda self: self._options.cancellable,
                           lambda self, on: setattr(self._options, "cancellable", bool(on)))

    def add_run_config_entry(self, key, value):
        self._config[str(key)] = str(value)

    def get_run_config_entry(self, key):
        return self._config[str(key)]


def get_all_providers():
    """recur's providers compiled into this build, in default priority order."""
    return [name for name, _, _ in _list_providers()]


def get_available_providers():
    """The providers of this build that have their device, in default priority order."""
    return [name for name, available, _ in _list_providers() if available]


def get_device():
    """As onnxruntime.get_device: "GPU" where a GPU provider has its device, else "CPU"."""
    gpu = {"cudnn", "cuda-generic"}
    return "GPU" if gpu & set(get_available_providers()) else "CPU"


# The onnxruntime provider options recur honours: (its provider, its option) -> recur's
# settings. Other options of onnxruntime's providers (gpu_mem_limit, arena_extend_strategy,
# cudnn_conv_algo_search, ...) have no counterpart and are ignored with a warning.
_ORT_OPTIONS = {
    ("CUDAExecutionProvider", "device_id"): ["cudnn.device", "cuda-generic.device"],
    ("CUDAExecutionProvider", "use_tf32"): ["cudnn.tf32"],
}


def _option_value(value):
    return ("1" if value else "0") if isinstance(value, bool) else str(value)


def _provider_settings(providers, provider_options):
    """recur settings from provider options given as onnxruntime takes them: (name, dict)
    pairs in `providers`, or `provider_options`, a list of dicts, one per provider. For
    recur's own provider names the keys are that provider's settings."""
    import warnings
    if provider_options is not None:
        if providers is None or len(provider_options) != len(providers):
            raise ValueError("provider_options needs one dict for each of the providers")
    settings = {}
    for i, p in enumerate(providers or []):
        options = {}
        if isinstance(p, (tuple, list)):
            p, options = p[0], dict(p[1]) if len(p) > 1 else {}
        if provider_options is not None:
            options.update(provider_options[i])
        for key, value in options.items():
            if p not in _ORT_PROVIDERS:
                settings["%s.%s" % (p, key)] = _option_value(value)
            elif (p, key) in _ORT_OPTIONS:
                # Only for providers that have their device: the others take no part, and
                # accept no settings.
                available = get_available_providers()
                for name in _ORT_OPTIONS[(p, key)]:
                    if name.split(".")[0] in available:
                        settings[name] = _option_value(value)
            else:
                warnings.warn("recur ignores %s's option %r" % (p, key), stacklevel=3)
    return settings


def _provider_names(providers):
    if providers is None:
        return None
    names = []
    for p in providers:
        if isinstance(p, (tuple, list)):  # onnxruntime's (name, options) form
            p = p[0]
        for name in _ORT_PROVIDERS.get(p, [p]):
            if name not in names:
                names.append(name)
    return names


def _seed(seed):
    # onnxruntime's seeds are int64: a negative one is taken modulo 2**64, as C++ converts it.
    if seed is None:
        return None
    if isinstance(seed, bool) or not hasattr(seed, "__index__"):
        raise TypeError("random_seed must be an int or None, not %s" % type(seed).__name__)
    seed = operator.index(seed)
    if not -2**63 <= seed < 2**64:
        raise ValueError("random_seed must fit 64 bits, got %d" % seed)
    return seed % 2**64


def _output_names(output_names):
    # A str is iterable too: "Y_h" was taken for the outputs "Y", "_" and "h". onnxruntime
    # refuses it (its binding takes a list of str) and takes bytes names; so does this.
    if isinstance(output_names, (str, bytes)):
        raise TypeError("output_names must be a list of output names or None, not a %s "
                        "(write [%r])" % (type(output_names).__name__, output_names))
    names = []
    for n in output_names:
        if isinstance(n, bytes):
            n = n.decode("utf-8")
        if not isinstance(n, str):
            raise TypeError("output_names must hold str, not %s (%r)" % (type(n).__name__, n))
        names.append(n)
    return names


class ModelMetadata:
    """What a model file says about itself, with onnxruntime's attribute names:
    producer_name, graph_name, graph_description, domain, description, version and
    custom_metadata_map (metadata_props as a dict); also producer_version, ir_version and
    opsets ({domain: version}, "" for ai.onnx)."""

    def __init__(self, fields):
        self.__dict__.update(fields)

    def __repr__(self):
        return "ModelMetadata(producer_name=%r, graph_name=%r, custom_metadata_map=%r)" % (
            self.producer_name, self.graph_name, self.custom_metadata_map)


class InferenceSession:
    """A loaded model. `path_or_bytes` is a file name or the model's bytes.

    providers: recur's names ("onednn", "reference", "cudnn", "cuda-generic") or
    onnxruntime's ("CPUExecutionProvider", ...), in priority order; None means all.
    threads: intra-op threads for the CPU providers (0: the provider's choice).
    settings: provider settings {"<provider>.<key>": "value"}.
    """

    def __init__(self, path_or_bytes, sess_options=None, providers=None, provider_options=None,
                 threads=None, settings=None, plan_only=False):
        opts = sess_options if sess_options is not None else SessionOptions()
        if not isinstance(opts, SessionOptions):
            raise TypeError("sess_options must be a recur.SessionOptions, not %s"
                            % type(opts).__name__)
        if isinstance(providers, (str, bytes)):
            # Iterated, "onednn" was the providers "o", "n", ...
            raise TypeError("providers must be a list of provider names or None, not a %s "
                            "(write [%r])" % (type(providers).__name__, providers))
        if threads is None:
            threads = opts.intra_op_num_threads
        if isinstance(threads, bool) or not hasattr(threads, "__index__"):
            raise TypeError("threads must be an int, not %s" % type(threads).__name__)
        threads = operator.index(threads)  # numpy's integers too
        if not -2**31 <= threads < 2**31:
            # Past int32 the binding would refuse the call itself, naming its C++ signature.
            error = Error("threads must be 0 (automatic) or a count of threads, got %d" % threads)
            error.code = ErrorCode.INVALID_ARGUMENT
            raise error
        merged = _provider_settings(providers, provider_options)
        merged.update(opts.settings)
        merged.update(settings or {})
        merged = {str(k): str(v) for k, v in merged.items()}
        seed = _seed(opts.random_seed if opts.random_seed is not None else _default_seed)
        # As onnxruntime names it: the prefix, the time the session began, ".json".
        profile = None
        if opts.enable_profiling:
            profile = "%s%s.json" % (opts.profile_file_prefix,
                                     time.strftime("%Y-%m-%d_%H-%M-%S"))
        options = dict(providers=_provider_names(providers), threads=threads, settings=merged,
                       optimize=bool(opts.enable_graph_optimizations), plan_only=plan_only,
                       random_seed=seed, profile=profile,
                       deterministic=bool(opts.use_deterministic_compute))
        if isinstance(path_or_bytes, (bytes, bytearray, memoryview)):
            self._session = _Session.from_bytes(bytes(path_or_bytes), options)
            self._model_path = None
        elif isinstance(path_or_bytes, (str, os.PathLike)):
            path = os.fsdecode(os.fspath(path_or_bytes))
            self._session = _Session(path, options)
            self._model_path = path
        else:
            raise TypeError("a model is a path (str or os.PathLike) or its bytes, not %s"
                            % type(path_or_bytes).__name__)
        self._options = opts
        self._settings = merged
        self._inputs = [NodeArg(*v) for v in self._session.inputs()]
        self._outputs = [NodeArg(*v) for v in self._session.outputs()]

    def get_inputs(self):
        """The inputs a run may need, as onnxruntime lists them: without the inputs that an
        initializer backs (get_overridable_initializers() has those)."""
        return [i for i in self._inputs if not i.has_default]

    def get_overridable_initializers(self):
        """Inputs with an initializer as their default: a run may feed them or not."""
        return [i for i in self._inputs if i.has_default]

    def get_outputs(self):
        return list(self._outputs)

    def get_modelmeta(self):
        """The model's producer, description, version and metadata_props (ModelMetadata)."""
        return ModelMetadata(self._session.metadata())

    def get_providers(self):
        """The providers that take part in this session, in priority order."""
        return list(self._session.providers())

    def get_provider_options(self):
        """{provider: {setting: value}} for the providers of this session, from `settings`."""
        return {p: {k.split(".", 1)[1]: v for k, v in self._settings.items()
                    if k.split(".", 1)[0] == p}
                for p in self.get_providers()}

    def get_session_options(self):
        return self._options

    def end_profiling(self):
        """With SessionOptions.enable_profiling: writes the profile so far (Chrome trace JSON,
        as onnxruntime's) and returns its file name; "" otherwise. The session goes on
        recording, and writes the file again when it is destroyed."""
        return self._session.end_profiling()

    def run(self, output_names, input_feed, run_options=None):
        """Runs the model. output_names: a list of output names, or None for all of them in
        model order; the run runs only the nodes the listed outputs need. input_feed: {input
        name: numpy array (or anything numpy.asarray takes; str arrays for string inputs), a
        dict for a map input, or a list of arrays (or of dicts) for a sequence input}.
        run_options: a RunOptions, or None. Returns a list of numpy arrays (object arrays of str
        for string outputs, a list for a sequence output, a dict for a map, None for an empty
        optional), as onnxruntime does."""
        names = None if output_names is None else _output_names(output_names)
        if not isinstance(input_feed, collections.abc.Mapping):
            raise TypeError("input_feed must be a dict {input name: value}, not %s"
                            % type(input_feed).__name__)
        if run_options is not None and not isinstance(run_options, RunOptions):
            raise TypeError("run_options must be a recur.RunOptions, not %s"
                            % type(run_options).__name__)
        return self._session.run(names or None, dict(input_feed),
                                 run_options._options if run_options is not None else None)

    def explain(self):
        """Where each node runs and why each provider before it declined, as a table."""
        return self._session.explain()

    def assignment(self):
        """A list of {"node", "op", "provider", "declined": [(provider, reason)], "notes"}."""
        return self._session.assignment()
