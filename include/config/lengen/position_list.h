// The one list of position encodings (no include guard: it is expanded once per use). Each line:
//   LENGEN_POSITION(NAME, HELP, (PARAMETERS...), FUSED)
// NAME is model.attention.positions' value; HELP one phrase for the config reference; PARAMETERS
// the model.attention keys it reads; FUSED what it asks of the fused evaluation kernel (a
// FusedTerm: kNone, kRotation, kHeadSlopes, or kDenseOnly for any other term, which keeps the
// dense path). The config layer reads these as its choices (attention_choices.cpp); the
// attention layer finds each one's record, a function NAME_position() that its own .cpp defines
// (position_record.h). Adding a position encoding: its .cpp, with that function, and one line here.
LENGEN_POSITION(nope, "no encoding, the causal mask only", (), kNone)
LENGEN_POSITION(rope, "GPT-NeoX rotate-half on q and k of every head", ("rope_base"), kRotation)
LENGEN_POSITION(alibi, "a distance bias on every head", ("alibi_slopes"), kHeadSlopes)
LENGEN_POSITION(nape, "ALiBi on the first heads, NoPE on the rest, which are the ones length scaling touches",
                ("alibi_heads", "alibi_slopes"), kHeadSlopes)
// -inf beyond the window: a term the fused kernel does not compute.
LENGEN_POSITION(window, "a sliding window: each query sees its last `window` keys only", ("window"), kDenseOnly)
