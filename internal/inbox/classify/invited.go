package classify

import (
	"slices"
	"strings"
)

// inviteReach is how many words before and after an invited candidate its clause and the sentence before
// are read for what it opts out of.
const inviteReach = 40

// invited answers whether the short reply candidate is the word our quoted message invited for opting out: a
// verb of replying followed shortly by the candidate, where the candidate's clause, or the sentence just
// before (Not interested? Reply NO), says it opts out: an opt-out word, or a stop and a more word besides the
// candidate itself (reply "no" and I'll stop writing; Vous ne souhaitez plus être contacté(e) ? Répondez
// simplement « non »), or, when the candidate is a bare no, a break-up phrase or a question whether the
// person has no interest (reply no and I'll close your file; répondez non et je clôture votre dossier; Not
// interested? Just reply NO; Kein Interesse? Antworten Sie einfach mit „Nein“; Pas intéressé ? Répondez
// simplement « non »; ¿No le interesa? Responda simplemente con «no»), in the candidate's sentence or the
// one before. Quote marks and spaces around the candidate are no words. A stop and a more word may also stand in the clause right
// after the candidate's, in its sentence, when that clause opens with a word of consequence (reply "no", and
// I won't write again; antworten Sie mit Nein, dann schreibe ich Ihnen nicht mehr; répondez non, et je ne
// vous écrirai plus; responda no, y no le escribiré más). Reply YES to book, or STOP to opt out invites no
// YES. The words read around the candidate are bounded (inviteReach), so a long quote costs linear time.
func (r *Rules) invited(candidate []string, quote string) (Evidence, bool) {
	words, at := segment(fold(strings.ReplaceAll(quote, ">", " ")))
	marks := r.markers.mark(words)
	for j, m := range marks {
		if m&roleInvite == 0 {
			continue
		}
		for k := j + 1; k <= j+6 && k+len(candidate) <= len(words); k++ {
			if !slices.Equal(words[k:k+len(candidate)], candidate) {
				continue
			}
			var roles, then role
			lo, hi := j, k+len(candidate)
			next := consequence(marks, at, hi, at[k].sentence)
			for i := max(0, k-inviteReach); i < min(len(words), k+len(candidate)+inviteReach); i++ {
				if i >= k && i < k+len(candidate) || at[i].sentence < at[k].sentence-1 || at[i].sentence > at[k].sentence {
					continue
				}
				// A break-up phrase may stand anywhere in the sentence (Antworten Sie mit Nein, dann schließe
				// ich Ihre Akte); the other words in the candidate's clause or the sentence before.
				m := marks[i] & roleClosing
				if at[i].clause == at[k].clause || at[i].sentence == at[k].sentence-1 {
					m |= marks[i] & (roleWord | roleStop | roleMore)
				}
				if m != 0 {
					roles |= m
					lo, hi = min(lo, i), max(hi, i+1)
				}
				if at[i].clause == next {
					then |= marks[i] & (roleWord | roleStop | roleMore)
				}
			}
			// The consequence clause counts for a stop and a more word only, and not when it offers an opt-out
			// word of its own (reply YES to book, and STOP to opt out: YES is no opt-out).
			if then&roleWord == 0 && then&(roleStop|roleMore) == roleStop|roleMore {
				roles |= roleStop | roleMore
				hi = max(hi, clauseEndIn(at, hi, next))
			}
			if roles&roleWord != 0 || roles&(roleStop|roleMore) == roleStop|roleMore ||
				(roles&roleClosing != 0 && r.markers.all(candidate, roleRefusal)) {
				return Evidence{Kind: "rule", Name: "invited_opt_out", Value: joinWords(candidate) + " as invited: " +
					joinWords(words[lo:hi])}, true
			}
			break
		}
	}
	return Evidence{}, false
}

// consequence answers the clause starting at or after word e when it is in sentence sentence and opens with a
// word of consequence (see roleThen), or -1; it reads at most inviteReach words.
func consequence(marks []role, at []place, e int, sentence int32) int32 {
	for n := e; n < len(at) && n < e+inviteReach && at[n].sentence == sentence; n++ {
		if n > 0 && at[n].clause != at[n-1].clause {
			if marks[n]&roleThen != 0 {
				return at[n].clause
			}
			return -1
		}
	}
	return -1
}

// clauseEndIn is the end of clause clause among the words from e, read at most inviteReach words on.
func clauseEndIn(at []place, e int, clause int32) int {
	n := e
	for n < len(at) && n < e+inviteReach && at[n].clause <= clause {
		n++
	}
	return n
}
