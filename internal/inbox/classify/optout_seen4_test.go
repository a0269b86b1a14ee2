package classify_test

import "testing"

// TestTheFourthSeenOptOutSetKeepsItsFigures judges testdata/optout_holdout4 (51 replies to nine campaigns in
// English, German, French and Spanish, 21 requests and 11 replies that only mention opting out). It was the
// fourth blind opt-out holdout, written by someone who had read neither the rules nor the earlier sets after
// the rules froze at commit d78af6b, where it scored recall 0.90 (19/21), precision 0.90 (19/21), with 2
// mentions taken for requests and 44 of 51 intents. Its misses were then fixed as general rules in the four
// languages: the person's habit told before a turn to the message at hand (I usually unsubscribe from these,
// but …; meistens melde ich mich ab; d'habitude je me désinscris; suelo darme de baja); no need to opt out,
// the phrase of removing judged as one (no hace falta que me dé de baja) and the German infinitive with zu
// governed by the clause before (es ist nicht nötig, mich auszutragen); the removal of the person's team,
// colleagues, company or domain, quantifiers between the verb and its object not counted (remove all of us
// and anyone else at our domain); a German verb split by its particle read whole (hören Sie endlich auf, mich
// anzuschreiben; tragen Sie mich bitte aus); one word of another language that matched only by losing its
// accents (intéressé in falls Interesse besteht); and declines for other priorities. So it is no longer
// blind: it is a labelled regression set, and this test holds its figures (every request heard, no mention
// taken, precision 1.0, 49 of 51 intents). Blind figures need a fifth holdout written after these rules froze.
func TestTheFourthSeenOptOutSetKeepsItsFigures(t *testing.T) {
	requireSeenSetHolds(t, "optout_holdout4", 49)
}
