// The one list of normalizers (no include guard: it is expanded once per use). Each line:
//   LENGEN_NORMALIZER(NAME, HELP, (PARAMETERS...), LABEL)
// NAME is model.attention.normalizer's value; HELP one phrase for the config reference;
// PARAMETERS the model.attention keys it reads; LABEL the report's name for it without length
// scaling ("" for none). The config layer reads these as its choices (attention_choices.cpp);
// the normalizers layer finds each one's record, a function NAME_normalizer() that its own .cpp
// defines (normalizer_registry.h: how to build it, its fused row kernel, benchmark variants and
// what the tests may assume). Adding a normalizer: its .cpp, with that function, and one line here.
LENGEN_NORMALIZER(softmax, "exp(z - max) normalised to sum 1", (), "Softmax")
LENGEN_NORMALIZER(sparsemax, "Euclidean projection onto the simplex (entmax with alpha 2)", (), "Sparsemax")
LENGEN_NORMALIZER(entmax15, "1.5-entmax, exact", (), "Entmax 1.5")
LENGEN_NORMALIZER(entmax, "alpha-entmax for any alpha > 1", ("alpha", "learn_alpha"), "")
LENGEN_NORMALIZER(topk, "softmax over the topk largest scores of each row", ("topk"), "Top-k softmax")
LENGEN_NORMALIZER(adaptive_softmax, "softmax with an entropy-dependent temperature (Velickovic et al. 2024)", (),
                  "Adaptive softmax")
LENGEN_NORMALIZER(stickbreaking, "each key takes a sigmoid share of what later keys leave", (), "Stick-breaking")
