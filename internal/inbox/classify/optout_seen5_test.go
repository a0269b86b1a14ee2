package classify_test

import "testing"

// TestTheFifthSeenOptOutSetKeepsItsFigures judges testdata/optout_holdout5 (51 replies in English, German,
// French and Spanish, 22 requests and 14 replies that only mention opting out). It was the fifth blind opt-out
// holdout, written by someone who had read neither the rules nor the earlier sets after the rules froze at
// commit 2dc76af, where it scored recall 0.86 (19/22), precision 0.95 (19/20), with 1 mention taken for a
// request and 48 of 51 intents. Its misses were then fixed as general rules in the four languages: our
// footer asking whether the person has no interest invites a bare no, whatever its quote marks (Not
// interested? Just reply NO; Kein Interesse? Antworten Sie einfach mit „Nein“; Pas intéressé ? Répondez
// simplement « non »; ¿No le interesa? Responda simplemente con «no»); forgetting the person, their details
// or this address is a removal (forget me; vergessen Sie meine Adresse; oubliez cette adresse; olviden mis
// datos); an opt-out the person meant and then turned from is a story like one of the past, unless it did
// not take (ich wollte mich eigentlich schon abmelden, aber dann …; I was going to unsubscribe, but then …;
// je comptais me désinscrire, mais …; iba a darme de baja, pero luego …); and a frozen budget is a decline.
// So it is no longer blind: it is a labelled regression set, and this test holds its figures (every request
// heard, no mention taken, precision 1.0, 51 of 51 intents). Blind figures need a sixth holdout written
// after these rules froze.
func TestTheFifthSeenOptOutSetKeepsItsFigures(t *testing.T) {
	requireSeenSetHolds(t, "optout_holdout5", 51)
}
