package classify_test

import "testing"

// TestTheThirdSeenOptOutSetKeepsItsFigures judges testdata/optout_holdout3 (50 replies to nine campaigns in
// English, German, French and Spanish, 20 requests and 11 replies that only mention opting out). It was the
// third blind opt-out holdout, written by someone who had read neither the rules nor the earlier sets after
// the rules froze at commit 4c37ba2, where it scored recall 0.80 (16/20), precision 0.84 (16/19), with 3
// mentions taken for requests and 43 of 50 intents. Its misses were then fixed as general rules in the four
// languages: an opt-out told as a story of the past before a contrast (narrated); a disclaimer of the wish
// (not that I want to unsubscribe); stopping one thing sent while asking for another (stop sending me PDFs,
// send me a link); a verb that means again (relancer, nachfassen, insistir) in a footer's invitation; articles
// and quantifiers that do not count in an erasure's reach (l'ensemble des données); the person's objection to
// processing or mailings (Art. 21); nobody at the company, or this address, as the object of contacting; the
// address of an addressee the reply says has left; the informal address (du/ihr, tu, vosotros). So it is no
// longer blind: it is a labelled regression set, and this test holds its figures (every request heard, no
// mention taken, precision 1.0, 48 of 50 intents). The fourth holdout, written after these rules froze, is now
// seen too (TestTheFourthSeenOptOutSet…).
func TestTheThirdSeenOptOutSetKeepsItsFigures(t *testing.T) {
	requireSeenSetHolds(t, "optout_holdout3", 48)
}
