"""What ``tools/api_coverage.py`` expects of mscore, and why some names are absent.

Three tables:

- ``TRAINING_OPS``: the operations of ``mindspore.ops`` (and ``.operations``,
  ``.functional``, ``.composite``) that training code uses and mscore therefore provides;
  everything else in those ~1500 names is listed by category (``ops_category``).
- ``ABSENT``: names left out on purpose in any module, each rule with its reason.
- ``PLANNED``: missing names that a known piece of work adds (the note names it); they
  count as gaps until they land, and the table shows them as ``planned``.

A rule names MindSpore modules by regular expression and names by a set or a regular
expression; the first rule that matches gives the reason.
"""
from __future__ import annotations

import re

OPS_MODULES = frozenset({"mindspore.ops", "mindspore.ops.operations",
                         "mindspore.ops.functional", "mindspore.ops.composite"})

# -- the training-side subset of mindspore.ops ------------------------------------------------
_PRIMITIVES = """
Abs Add AddN ApplyMomentum ArgMaxWithValue ArgMinWithValue Argmax Argmin Assign AssignAdd
AssignSub AvgPool BCEWithLogitsLoss BatchMatMul BatchNorm BiasAdd BinaryCrossEntropy
BroadcastTo Cast Ceil Concat Conv2D Conv2DBackpropInput Conv2DTranspose Conv3D
Conv3DTranspose Cos CumSum DType Depend Div DivNoNan Dropout Elu Equal Erf Exp ExpandDims
Expm1 FastGeLU Fill Flatten Floor FloorDiv FloorMod Gather GatherD GatherV2 GeLU Ger Greater
GreaterEqual HSigmoid HSwish HistogramSummary Identity ImageSummary IsFinite IsInf IsNan
KLDivLoss L2Loss L2Normalize LayerNorm Less LessEqual Log Log1p LogSoftmax LogicalAnd
LogicalNot LogicalOr LogicalXor MaskedFill MatMul MaxPool Maximum Minimum Mish Mul NLLLoss Neg
NotEqual OneHot Ones OnesLike PReLU Pack Pad Partial Pow Print Rank RealDiv Reciprocal
ReduceAll ReduceAny ReduceMax ReduceMean ReduceMin ReduceSum ReLU ReLU6 Reshape Rsqrt
ScalarSummary SeLU Select Shape Sigmoid SigmoidCrossEntropyWithLogits Sign Sin Size Slice
SmoothL1Loss Softmax SoftmaxCrossEntropyWithLogits Softplus Softsign
SparseSoftmaxCrossEntropyWithLogits Split Sqrt Square SquaredDifference Squeeze Stack
StandardNormal StopGradient StridedSlice Sub Tanh TensorAdd TensorSummary Tile Transpose Tril
Triu UniformReal Unpack Unstack Zeros ZerosLike
Primitive GradOperation HyperMap Map MultitypeFuncGraph Dense ReverseV2 Range Eye LinSpace
Addcmul IsClose CeLU
"""
_FUNCTIONS = """
abs absolute add addcmul addn all amax amin any arange argmax argmin assign assign_add
assign_sub avg_pool2d batch_norm bias_add binary_cross_entropy binary_cross_entropy_with_logits
bmm broadcast_to cast cat ceil celu chunk clamp clip clip_by_global_norm clip_by_norm
clip_by_value concat conv1d conv2d conv3d cos cosine_similarity cross_entropy cumsum dense
depend div divide dropout dtype elu eq equal erf exp expand_dims expm1 eye fill flatten
flip floor floor_div floor_divide floor_mod floordiv floormod full full_like gather gather_d
gather_elements ge gelu ger glu grad greater greater_equal gt hardsigmoid hardswish hardtanh
isclose isfinite isinf isnan kl_div l1_loss layer_norm le leaky_relu less less_equal
linspace log log1p log_softmax logaddexp logical_and logical_not logical_or logical_xor
logsigmoid logsumexp lt masked_fill matmul max max_pool2d maximum mean min minimum mish mm
mse_loss mul multiply narrow ne neg negative nll_loss norm normal not_equal numel one_hot
ones ones_like outer pad partial permute pow prelu rand randn rank reciprocal reduce_max
reduce_mean reduce_min reduce_sum relu relu6 remainder reshape rsqrt scalar_to_tensor select
selu shape sigmoid sign silu sin size slice smooth_l1_loss softmax softplus softsign split
sqrt square squeeze stack standard_normal std stop_gradient strided_slice sub subtract sum
swapaxes swapdims t tanh tensor_add tensor_div tensor_mul tensor_sub tensor_exp tensor_pow
tensor_ge tensor_le tile transpose tril triu true_divide tuple_to_array unbind uniform
unsqueeze unstack value_and_grad var vjp where zeros zeros_like get_grad is_tensor
huber_loss margin_ranking_loss cosine_embedding_loss hinge_embedding_loss soft_margin_loss
multilabel_soft_margin_loss multi_margin_loss multilabel_margin_loss gaussian_nll_loss
triplet_margin_loss ctc_loss
"""
TRAINING_OPS = frozenset(_PRIMITIVES.split() + _FUNCTIONS.split())

# -- categories of the ops outside the subset --------------------------------------------------
_INTERNAL_MODULES = re.compile(
    r"mindspore\.ops\.(primitive|vm_impl_registry|op_info_register|signature|_utils|"
    r"operations\.(custom_ops|_ms_kernel|control_ops|_sequence_ops|_inner_ops|inner_ops|"
    r"manually_defined\._inner|_embedding_cache_ops|_grad_ops|reshard_ops|_rl_inner_ops)|"
    r"auto_generate\.(cpp_create_prim_instance_helper|pyboost_inner_prim)|"
    r"function\.(vmap_func|reshard_func|parameter_func|other_func)|functional_overload)"
    r"|mindspore\.common\._register_for_tensor")
_INTERNAL_NAMES = re.compile(
    r"^(Scalar[A-Z]\w*|scalar_\w+|tuple_\w+|list_\w+|make_\w+|dict_\w+|bool_\w+|string_\w+|"
    r"environ_\w+|env_\w+|is_\w+|in_dict|not_in_dict|hastype|typeof|switch\w*|J|"
    r"SliceGetItem|array_reduce|array_to_scalar|broadcast_gradient_args|distribute|embed|"
    r"reduced_shape|shape_mul|tensor_operator_registry|isconstant|geswitch|merge|"
    r"mixed_precision_cast|ref_to_embed|row_tensor_\w+|iter_converter|ms_hasnext|ms_next|"
    r"zip_operation|tail|augassign_\w+|hyper_add|recompute_block|add_flags|identity|"
    r"[A-Z]\w*RegOp|DataType|DtypeToEnum|TensorToTuple|PrimitiveWith\w+|constexpr|"
    r"prim_\w+_register|custom_info_register|op_info_register|kernel|ms_kernel|"
    r"get_vm_impl_fn|Custom\w*|MoveTo|move_to|PyExecute|PyFunc|Pull|Push|Reusing|"
    r"UpdateState|TCPStore|P2POp|Morph|ForiLoop|WhileLoop|Scan|cond|Registry)$")
_LINALG = re.compile(
    r"(fft|stft|window|cholesky|Cholesky|svd|Svd|qr$|Qr$|eig|Eig|lu_|Lu[A-Z]|matrix_|Matrix|"
    r"det$|det_|Determinant|inverse|Inverse|pinv|lstsq|Lstsq|orgqr|Orgqr|ormqr|Ormqr|geqrf|"
    r"Geqrf|slogdet|logdet|Triangular|tensor_dot|Tridiagonal|einsum|Einsum|kron|vander|"
    r"adjoint|trace$|Trace$|cov$|cdist|Cdist|pdist|Pdist|vecdot|inner$|mv$|addmv|addr$|"
    r"addmm|addbmm|baddbmm|dot$|batch_dot|block_diag)")
_IMAGE = re.compile(
    r"(resize|Resize|crop|Crop|roi|ROI|NonMaxSuppression|nms|NMS|bounding_box|BoundingBox|"
    r"iou|IOU|grid_sample|GridSampler|affine_grid|AffineGrid|upsample|Upsample|interpolate|"
    r"pixel_|RGB|HSV|Adjust|ExtractGlimpse|ScaleAndTranslate|CheckValid|check_valid|"
    r"SampleDistorted|Col2Im|col2im|Im2Col|fold$|unfold$|ExtractImagePatches|"
    r"ExtractVolumePatches|deformable|Deformable|rotated_iou)")
_OPTIMIZER_KERNELS = re.compile(
    r"^(Apply\w+|SparseApply\w+|Fused\w+|Adam\w*|SGD|LARSUpdate|AdamWeightDecay|"
    r"ApplyRotaryPosEmb)$")
_ATTENTION_KERNELS = re.compile(
    r"(attention|Attention|rms_norm|RmsNorm|add_layer_norm|swiglu|moe_|nsa_|"
    r"rotary_position|ReshapeAndCache|GroupTopk|lightning_indexer|ring_attention|"
    r"all_gather_matmul|matmul_reduce_scatter)")

OPS_CATEGORIES = (
    ("Ascend-only in MindSpore (its docstring lists no CPU or GPU support)",
     lambda n, r: r.get("platforms") is not None and not
     {"CPU", "GPU"} & set(r["platforms"])),
    ("sparse tensors (COO/CSR/RowTensor): mscore's tensors are dense",
     lambda n, r: "sparse" in (r.get("defined_in") or "") or "_csr_" in
     (r.get("defined_in") or "") or re.match(r"^(coo|csr)_|^(COO|CSR)|Sparse|sparse_", n)),
    ("collective operations: distributed training is mscore.communication's",
     lambda n, r: re.search(r"comm_(ops|func)|\.communication", r.get("defined_in") or "")),
    ("graph-compiler and kernel-registration internals (custom-operator registration, scalar "
     "and sequence primitives of the graph IR, control flow, dispatch tables): eager Python "
     "does these itself",
     lambda n, r: _INTERNAL_MODULES.search(r.get("defined_in") or "") or
     _INTERNAL_NAMES.match(n)),
    ("deprecated aliases in MindSpore 2.10", lambda n, r: r.get("defined_in") ==
     "mindspore.ops.deprecated"),
    ("fused optimizer and LLM-inference kernels: mscore's nn optimizers and layers compute "
     "these from primitives",
     lambda n, r: _OPTIMIZER_KERNELS.match(n) or _ATTENTION_KERNELS.search(n)),
    ("random distributions beyond uniform and normal (Gamma, Poisson, multinomial, ...)",
     lambda n, r: re.search(r"random_(ops|func)", r.get("defined_in") or "")),
    ("linear algebra and spectral ops (decompositions, solvers, FFT, window functions)",
     lambda n, r: re.search(r"linalg|spectral", r.get("defined_in") or "") or
     _LINALG.search(n)),
    ("image-processing and detection ops", lambda n, r: re.search(
        r"image_(ops|func)", r.get("defined_in") or "") or _IMAGE.search(n)),
    ("debugging hooks of the graph compiler (TensorDump, HookBackward, InsertGradientOf, "
     "Assert, ...)", lambda n, r: "debug" in (r.get("defined_in") or "")),
    ("math op outside the training-side subset (special functions, bitwise and complex ops, "
     "further reductions, ...): computable from mscore's primitive set, added when training "
     "code needs it", lambda n, r: "math" in (r.get("defined_in") or "")),
    ("array op outside the training-side subset (scatter/segment/index ops, further shape "
     "ops, ...): added when training code needs it",
     lambda n, r: "array" in (r.get("defined_in") or "")),
    ("nn op outside the training-side subset (adaptive/fractional/3-d pooling, further "
     "losses and activations, RNN kernels, ...): added when training code needs it",
     lambda n, r: "nn_" in (r.get("defined_in") or "")),
    ("other operation outside the training-side subset (computable from mscore's primitive "
     "set; added when training code needs it)", lambda n, r: True),
)


def ops_category(name, rec):
    """The category (with its reason) of an ops name outside ``TRAINING_OPS``."""
    for text, test in OPS_CATEGORIES:
        if test(name, rec):
            return text
    raise AssertionError("the last category matches everything")


# -- names absent on purpose -------------------------------------------------------------------
_ALL = r".*"
ABSENT = (
    (_ALL, r"^(COOTensor|CSRTensor|RowTensor|SparseTensor|SparseTensorDenseMatmul|"
           r"SparseToDense|sparse)$",
     "sparse tensors: mscore's tensors are dense"),
    (_ALL, r"^(mindrecord|FileReader|FileWriter|MindPage|\w+ToMR|SUCCESS|FAILED|set_enc_key|"
           r"set_enc_mode|set_dec_mode|MindDataset|OBSMindDataset)$",
     "MindRecord, MindSpore's own dataset storage format"),
    (_ALL, r"^(Stream|StreamCtx|StreamLimitCtx|current_stream|default_stream|set_cur_stream|"
           r"communication_stream|DeviceCtx|MemPool|PluggableAllocator|use_mem_pool|"
           r"empty_cache|memory_\w+|max_memory_\w+|reset_max_memory_\w+|"
           r"reset_peak_memory_stats|ms_memory_recycle|hal|runtime|device_context|"
           r"device_manager|set_device_limit|get_device_limit|set_stream_limit|"
           r"get_stream_limit|reset_stream_limit|set_memory|set_kernel_launch_\w+|"
           r"launch_blocking|dispatch_threads_num|set_cpu_affinity|UntypedStorage|"
           r"swap_tensors|get_current_device|Event)$",
     "device runtime management (streams, allocators, memory pools, kernel launch): the "
     "array library manages its own device"),
    (_ALL, r"^(graph|rewrite|SymbolTree|Node|NodeType|ScopedValue|Symbol|enable_dynamic|"
           r"get_obj_module_and_name_info|is_invalid_or_jit_forbidden_method|"
           r"is_jit_forbidden_module|set_recursion_limit|register_saved_tensors_hooks|"
           r"saved_tensors_hooks|JitConfig|get_level|set_dump|arg_dtype_cast|"
           r"arg_handler|default_config|experimental|tools|utils|safeguard|"
           r"multiprocessing|version|log|get_log_config|onnx|run_check|dryrun|"
           r"MsDispatchMode|from_dlpack|to_dlpack|frombuffer|flops_collection)$",
     "graph-compiler internals, MindSpore's other namespaces (rewrite, tools, ...) "
     "and installation utilities: outside mscore's training core"),
    (r"mindspore(\.context)?$", r"^(set_ps_context|get_ps_context|reset_ps_context)$",
     "parameter server mode (Ascend clusters)"),
    (r"mindspore\.communication$", r"^get_comm_name$",
     "Ascend-only (HCCL's communicator name; MindSpore's CPU and GPU builds raise "
     "RuntimeError)"),
    (r"mindspore\.train\.metrics$", r"^(accuracy|bleu_score|confusion_matrix|cosine_similarity|"
     r"dice|error|fbeta|hausdorff_distance|loss|mean_surface_distance|metric|"
     r"occlusion_sensitivity|perplexity|precision|recall|roc|"
     r"root_mean_square_surface_distance|topk)$",
     "MindSpore's one-file-per-metric source layout; every metric imports from "
     "mscore.train.metrics (and mscore.nn.metrics), where MindSpore's own examples import it"),
    (_ALL, r"^(Layout|shard|reshard|parallel|set_algo_parameters|get_algo_parameters|"
           r"reset_algo_parameters|parameter_broadcast|merge_pipeline_strategys|"
           r"rank_list_for_transform|transform_checkpoint_by_rank|transform_checkpoints|"
           r"load_distributed_checkpoint|get_ckpt_path_with_strategy|"
           r"sync_pipeline_shared_parameters|restore_group_info_list|"
           r"load_segmented_checkpoints|unified_safetensors|TrainFaultTolerance|"
           r"TFTCommValue|mindio_preload|set_mindio_server_info|RSCPluginHandle|"
           r"ExitByRequest|stress_detect|sdc_detect_start|sdc_detect_stop|"
           r"get_sdc_detect_result|comm_exec_order_check|runtime_execution_order_check|"
           r"ConvertModelUtils|ConvertNetUtils|train_thor|thor|Conv2dThor|DenseThor|"
           r"EmbeddingThor|EmbeddingLookupThor|VirtualDatasetCellTriple|OptTFTWrapper|"
           r"AdaSumByDeltaWeightWrapCell|AdaSumByGradWrapCell|tft_wrapper|adasum)$",
     "semi-automatic/pipeline parallelism, strategy-sharded checkpoints, THOR and cluster "
     "fault tolerance (Ascend clusters); data parallelism is mscore.communication's"),
    (r"mindspore\.nn\.optim$", r"^adafactor$",
     "the module of AdaFactor, which MindSpore runs on Ascend only"),
    (_ALL, r"^(Profiler|EnvProfiler|profiler|FlopsUtilizationCollector)$",
     "profiling: use the array library's profiler (torch.profiler, jax.profiler)"),
    (_ALL, r"^(obfuscate_ckpt|load_obf_params_into_net|export_split_mindir|"
           r"SummaryLandscape)$",
     "MindSpore-specific tooling (model obfuscation, split MINDIR, MindInsight loss "
     "landscape)"),
    (_ALL, r"^(jacfwd|jacrev|jvp|linearize|derivative|jet|vmap)$",
     "forward-mode differentiation and vectorizing map: the reference autodiff is "
     "reverse-mode, and backends differ in vmap support"),
    (_ALL, r"^(complex64|complex128|cfloat|cdouble|float8_e4m3fn|float8_e5m2|hifloat8|"
           r"qint4x2|ushort|QuantDtype)$",
     "dtype not supported by every backend (complex, 8-bit floats, quantized types)"),
    (_ALL, r"^(Type|TensorType|Int|number|string|list_|tuple_|type_none|tensor_type|"
           r"dtype_to_pytype|get_py_obj_dtype)$",
     "MindSpore's type lattice of the graph compiler (mscore.common.dtype.DType covers the "
     "tensor dtypes)"),
    (_ALL, r"^(default_generator|get_rng_state|set_rng_state)$",
     "MindSpore's default Generator and its state: mscore's default stream is the global "
     "one, seeded by set_seed/manual_seed (mscore.Generator gives streams of their own)"),
    (r"mindspore(\.train.*)?",
     r"^(anf_ir_pb2|checkpoint_pb2|lineage_pb2|mind_ir_pb2|node_strategy_pb2|summary_pb2|"
     r"ParamDictFuture|init_ckpt_file_system|tensor_to_np_type|"
     r"process_export_options|enums|writer|AmpDecorator|amp_cast)$",
     "MindSpore's generated protobuf modules and internal helpers of serialization, summary "
     "and amp"),
    (r"mindspore\.nn(\.wrap)?$", r"^(probability|GraphCell|GetNextSingleOp|"
                                  r"DistributedGradReducer|no_init_parameters)$",
     "graph-mode and device-queue plumbing (GraphCell runs a loaded MINDIR graph; "
     "GetNextSingleOp reads a device queue), or a separate package (probability)"),
    (r"mindspore\.dataset$", r"^(TFRecordDataset|ManifestDataset|DatasetCache)$",
     "TFRecord and Manifest files, and MindSpore's dataset cache server: storage and caching "
     "services of MindSpore's C++ engine"),
    (r"mindspore\.dataset$", r"^(AGNewsDataset|AmazonReviewDataset|CLUEDataset|"
                             r"CMUArcticDataset|CoNLL2000Dataset|DBpediaDataset|EnWik9Dataset|"
                             r"GTZANDataset|IMDBDataset|IWSLT2016Dataset|IWSLT2017Dataset|"
                             r"LJSpeechDataset|LibriTTSDataset|Multi30kDataset|"
                             r"PennTreebankDataset|SQuADDataset|SST2Dataset|SogouNewsDataset|"
                             r"SpeechCommandsDataset|TedliumDataset|UDPOSDataset|"
                             r"WikiTextDataset|YahooAnswersDataset|YelpReviewDataset|"
                             r"YesNoDataset)$",
     "text and audio corpora: mscore's "
     "pipeline carries them as string or numpy columns; read them with TextFileDataset, "
     "CSVDataset or GeneratorDataset"),
    (r"mindspore\.dataset$", r"^(compare|core|dataloader|debug|deserialize|serialize|show|"
                             r"sync_wait_for_dataset|validator)$",
     "internals of MindSpore's C++ pipeline engine (pipeline serialisation, debug hooks, "
     "sync_wait between pipeline and network)"),
    (r"mindspore\.nn$", r"^(MatDet|MatInverse)$",
     "Cholesky-based determinant and inverse of symmetric positive-definite matrices "
     "(GPU-only in MindSpore 2.10): mscore's primitive set has no matrix decomposition; "
     "linear algebra is outside the training core"),
    (r"mindspore\.dataset$", _ALL,
     "another image corpus with its own annotation format (COCO, VOC, CelebA, ...): parse it and "
     "wrap it in GeneratorDataset, or lay it out for ImageFolderDataset"),
    (r"mindspore\.dataset\.(vision|transforms)$", r"^(py_transforms_util|validators|Plugin)$",
     "MindSpore's internal helper modules of the transforms, and Plugin (loads MindSpore's C++ "
     "plugin libraries)"),
    (r"mindspore\.dataset\.vision$", r"^(\w*BBox|BoundingBoxAugment)$",
     "bounding-box transforms of detection pipelines: they go with the VOC/COCO sources, "
     "which are absent"),
    (r"mindspore\.dataset\.vision$", r"^(DecodeVideo|VideoDecoder|read_video\w*|read_file|"
                                    r"read_image|write_file|write_jpeg|write_png|encode_jpeg|"
                                    r"encode_png|ImageReadMode)$",
     "image and video file codecs: read and write image files with Pillow (Decode decodes "
     "encoded images in a pipeline); video is outside the training core"),
    (r"mindspore\.dataset\.vision$", r"^(AutoAugment|AutoAugmentPolicy|RandAugment|"
                                    r"TrivialAugmentWide|UniformAugment|RandomSelectSubpolicy|"
                                    r"MixUp|MixUpBatch|CutMixBatch|Erase)$",
     "not in mscore yet: policy augmentations, batch mixing and erasing (their draws from "
     "MindSpore's streams, e.g. the Beta draws of MixUp/CutMix, are not reproduced); write them "
     "as a Python function for map or batch(per_batch_map=...)"),
    (r"mindspore\.dataset\.(vision|transforms)$", _ALL,
     "not in mscore yet: less common geometric, filter and colour transforms (affine and "
     "perspective warps, Gaussian blur, sharpness, five/ten crops, ...) and Unique; pass a "
     "Python function to map instead"),
    (r"mindspore\.communication$", r"^(HCCL_WORLD_COMM_GROUP|MCCL_WORLD_COMM_GROUP)$",
     "Ascend collective library group names"),
    (r"mindspore$", r"^(load_mindir|save_mindir)$",
     "MINDIR graph files: see mscore.export/mscore.load"),
)

# The part of mindspore.dataset that mscore implements (the rest is ABSENT above).
DATASET_BASIC = frozenset({"GeneratorDataset", "NumpySlicesDataset", "MnistDataset", "config",
                           "text",
                           "transforms", "vision", "engine", "zip", "Cifar10Dataset",
                           "ImageFolderDataset", "RandomSampler", "SequentialSampler",
                           "DistributedSampler", "SubsetRandomSampler", "samplers",
                           "DSCallback", "WaitedDSCallback", "Schema", "PaddedDataset",
                           "Cifar100Dataset", "FashionMnistDataset", "KMnistDataset",
                           "CSVDataset", "TextFileDataset", "RandomDataset", "FakeImageDataset",
                           "SubsetSampler", "WeightedRandomSampler", "PKSampler", "callback"})

# -- names other work adds ---------------------------------------------------------------------
# Tensor methods (the pseudo-module ``mindspore.Tensor``), ``mindspore.numpy`` and ``mint``.
_NEW_API = r"mindspore\.(Tensor|numpy|mint(\.nn(\.functional)?|\.optim)?)"
_MINT_NUMPY = r"mindspore\.(numpy|mint(\.nn(\.functional)?|\.optim)?)"
ABSENT += (
    (_MINT_NUMPY, r"^(angle|conj|imag|real|polar)$",
     "complex numbers: mscore's dtypes are real"),
    (r"mindspore\.numpy", r"^(cholesky\w*|det|eigvals|geqrf|inv|inverse|logdet|"
                          r"log_matrix_determinant|lstsq|lu_solve|matrix_determinant|"
                          r"matrix_power|orgqr|ormqr|qr|slogdet|svd|triangular_solve|linalg|"
                          r"corrcoef)$",
     "matrix decompositions and solvers: not bound in mscore.numpy yet (mscore.ops, "
     "Tensor and mint.linalg have det, inverse, cholesky, qr, svd, ...)"),
    (r"mindspore\.numpy", r"^(erfinv_?|i0|special|polygamma)$",
     "special functions: not bound in mscore.numpy yet (mscore.ops, Tensor and mint have "
     "erfinv and i0)"),
    (r"mindspore\.Tensor", r"^eigvals$",
     "eigenvalues of a general matrix are complex: mscore's dtypes are real (MindSpore "
     "2.10's own Tensor.eigvals fails: it calls ops.eigvals without the matrix)"),
    (r"mindspore\.Tensor", r"^(assign_value_cpp|const_arg|convert_bytes_to_tensor|data_ptr|"
                           r"data_sync|delete_|delta_seed|flush_from_cache|get_bytes|"
                           r"getitem_index_info|hooks|index|index_of_parent_|init|"
                           r"init_finished|init_flag|is_init|is_meta|offload|"
                           r"offload_file_path|param_info|parent_tensor_|pin_memory|set_|"
                           r"set_cast_dtype|set_device_address|set_init_flag|set_param_info|"
                           r"setitem_index_info|storage|symbolic_shape|to_|untyped_storage|"
                           r"virtual_flag|wait_pipeline|remove_hook|requires_grad_)$",
     "device, storage and graph-engine internals of MindSpore's C++ tensor (addresses, "
     "offload, pinned memory, init flags, hooks of the PyNative executor): the array "
     "library owns its storage"),
    (r"mindspore\.Tensor", r"^(to_coo|to_csr)$", "sparse tensors: mscore's tensors are dense"),
    (r"mindspore\.numpy", r"^(fft|histogram2d|histogramdd)$",
     "FFT and multi-dimensional histograms: outside training code (use NumPy on the host)"),
    (r"mindspore\.numpy", r"^(dtypes|utils_const)$",
     "implementation submodules of mindspore.numpy (their public names are exported by "
     "mindspore.numpy)"),
    (r"mindspore\.mint", r"^npu_gelu$", "an Ascend (NPU) kernel: mint.nn.functional.gelu is "
                                        "the portable spelling"),
    (r"mindspore\.mint\.distributed", r"^(send|recv|isend|irecv|P2POp|batch_isend_irecv)$",
     "point-to-point transfers: the backend contract's collectives have none (all-reduce, "
     "all-gather, broadcast, reduce-scatter and barrier)"),
    (r"mindspore\.mint\.distributed", r"^(all_gather_object|broadcast_object_list|"
                                       r"gather_object|scatter_object_list|send_object_list|"
                                       r"recv_object_list)$",
     "object collectives: they unpickle what other processes send, which mscore never does"),
    (r"mindspore\.mint\.distributed", r"^distributed$",
     "the implementation submodule of mint.distributed (its functions are exported by "
     "mint.distributed)"),
    (r"mindspore\.mint\.nn", r"^layer$",
     "the implementation submodule of mint.nn (its classes are exported by mint.nn)"),
    (r"mindspore\.dataset\.text", r"^validators$",
     "MindSpore's argument-check helpers of dataset.text (an implementation submodule)"),
    (r"mindspore\.mint\.nn\.functional", r"^grid_sample$",
     "grid sampling: not provided yet (no mscore.ops counterpart)"),
)


PLANNED = ()   # nothing outstanding: every name is present or absent with its reason


def _first(table, module, name):
    for mod_pat, name_pat, text in table:
        if re.match(f"(?:{mod_pat})\\Z", module) and re.match(name_pat, name):
            return text
    return None


def absent_reason(module, name, rec):
    """Why MindSpore's ``module.name`` is left out of mscore, or None."""
    if module == "mindspore.dataset" and name in DATASET_BASIC:
        return None
    if module in OPS_MODULES and rec.get("kind") == "module":
        return ("a submodule of MindSpore's ops implementation (its public names are "
                "re-exported by the ops modules and listed there)")
    if module not in OPS_MODULES and OPS_CATEGORIES[0][1](name, rec):
        return OPS_CATEGORIES[0][0]  # Ascend-only, wherever it lives
    return _first(ABSENT, module, name)


def planned_by(module, name):
    """The work that adds MindSpore's ``module.name`` to mscore, or None."""
    return _first(PLANNED, module, name)


def explicit_names():
    """Every name the rules spell out literally (a test checks each still exists in the
    reference, so no rule outlives the name it was written for)."""
    names = set(TRAINING_OPS) | set(DATASET_BASIC)
    for table in (ABSENT, PLANNED):
        for _, pat, _ in table:
            if pat != _ALL:
                body = pat.strip("^$()")
                names.update(p for p in body.split("|") if re.fullmatch(r"\w+", p))
    return names
