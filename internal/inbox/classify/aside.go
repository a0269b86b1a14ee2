package classify

// storyReach bounds how far narrated reads around the opt-out words, and thingReach and wishReach how far
// anotherThing reads for the thing and the other wish, so a long text costs time in proportion to its
// length.
const (
	storyReach = 30
	thingReach = 4
	wishReach  = 40
)

// narrated says whether the opt-out words [start, end) tell of the person's past: a past-time word stands in
// their sentence before a contrast that turns to the message at hand (I hit unsubscribe on your newsletter
// back in the spring, but this one is relevant; ich habe letztes Jahr auf Abmelden geklickt, aber das hier
// passt; j'ai demandé à me désinscrire l'an dernier, mais …; me di de baja hace meses, pero …), the contrast
// later in the sentence or opening the next one. It is a complaint, and so a request, when the sentence says
// mail goes on or the opt-out did not take, before the contrast (I clicked unsubscribe last year and still
// get these) or after it (but you keep writing; but it didn't work; aber ich bekomme weiter Mails; pero siguen
// llegando; but the link is broken). A wish or a plan told in the past before the opt-out words is such a
// story, an opt-out meant and then turned from (ich wollte mich eigentlich schon abmelden, aber dann habe ich
// gesehen …; I was going to unsubscribe, but then …; je voulais me désinscrire, mais finalement …; iba a
// darme de baja, pero luego …), and a complaint like it when the opt-out did not take (I wanted to
// unsubscribe, but the link is broken; ich wollte mich abmelden, aber es geht nicht). It reads storyReach
// words either way.
func (c *judgement) narrated(start, end int) bool {
	sentence, turn := c.at[start].sentence, -1
	for j := end; j < min(len(c.words), end+storyReach) && turn < 0; j++ {
		switch {
		case c.at[j].sentence != sentence && c.marks[j]&roleContrast == 0:
			return false // … back in March. But this is relevant: the next sentence may open with it.
		case c.marks[j]&roleContrast != 0:
			turn = j
		}
	}
	past := false
	for j := max(0, turn-storyReach); j < turn; j++ {
		if c.at[j].sentence != sentence {
			continue
		}
		if c.marks[j]&rolePersist != 0 {
			return false
		}
		past = past || c.marks[j]&rolePast != 0 || j < start && c.marks[j]&roleIntended != 0
	}
	if !past {
		return false
	}
	for j := turn + 1; j < min(len(c.words), turn+storyReach) && c.at[j].sentence == c.at[turn].sentence; j++ {
		if c.marks[j]&(rolePersist|roleStop|roleMore|roleContact|roleChannel|roleWord|roleRemove|roleNoun) != 0 {
			return false
		}
	}
	return true
}

// habitual says whether the opt-out words at start tell what the person usually does, a habit and no
// request (I usually unsubscribe from these without reading them; normalerweise melde ich mich bei so etwas
// sofort ab; d'habitude, je me désinscris de ce genre de mails; suelo darme de baja de estos correos): a word
// of habit before them in their clause with no contrast between, or alone in the clause that opens their
// sentence, with the person as the subject in their clause. It is a complaint, and so a request, when the
// sentence says mail goes on or the opt-out did not take (I usually unsubscribe, but you still write).
func (c *judgement) habitual(start int, sp span) bool {
	habit := -1
	for j := start - 1; j >= sp.lo && c.marks[j]&roleContrast == 0 && habit < 0; j-- {
		if c.marks[j]&roleHabitual != 0 {
			habit = j
		}
	}
	s := c.at[start].sentence
	if habit < 0 && sp.lo > 0 && c.at[sp.lo-1].sentence == s {
		lo := sp.lo - 1
		for lo > 0 && c.at[lo-1].clause == c.at[sp.lo-1].clause {
			lo--
		}
		only := lo == 0 || c.at[lo-1].sentence != s // the clause opens the sentence
		for j := lo; j < sp.lo; j++ {
			only = only && c.marks[j]&(roleHabitual|roleFiller) != 0
			if c.marks[j]&roleHabitual != 0 {
				habit = j
			}
		}
		if !only {
			habit = -1
		}
	}
	if habit < 0 || !c.has(sp.lo, sp.hi, roleSelf) {
		return false
	}
	lo, hi := habit, start
	for lo > 0 && c.at[lo-1].sentence == s {
		lo--
	}
	for hi < len(c.words) && c.at[hi].sentence == s {
		hi++
	}
	return !c.has(lo, hi, rolePersist)
}

// anotherThing says whether the stop of the verb of sending at verb (its object, the person, at object) is
// of one thing that is no mailing, and the person asks, in the words that follow (wishReach) up to the end
// of the next sentence, for something else to be sent or a call instead: they want mail, only other mail
// (stop sending me PDFs, just send me a calendar link; schicken Sie mir keine PDFs mehr, schicken Sie mir
// lieber einen Link; arrêtez de m'envoyer des PDF, envoyez-moi plutôt un lien; dejen de mandarme PDFs,
// mándenme mejor un enlace). Without the thing (stop emailing me, call me instead) or without the other
// wish (stop sending me PDFs), a request stands.
func (c *judgement) anotherThing(verb, object int, sp span) bool {
	if verb < 0 {
		return false
	}
	t := c.thing(max(verb, object)+1, sp)
	if t < 0 {
		return false
	}
	sentences := 0
	for j := t + 1; j < min(len(c.words), t+1+wishReach); j++ {
		if c.at[j].sentence != c.at[j-1].sentence {
			if sentences++; sentences > 1 {
				break
			}
		}
		if c.marks[j]&roleContact != 0 && c.marks[j]&roleChannel == 0 && c.wish(j) {
			return true
		}
	}
	return false
}

// wish says whether the verb of contacting at j asks for mail: not negated or stopped, not the person's own
// doing, with the person as its object or a redirect in its clause (send me a link; envoyez-moi plutôt). It
// reads a few words around j in its clause.
func (c *judgement) wish(j int) bool {
	lo, hi := j, j+1
	for lo > max(0, j-maxObjectGap) && c.at[lo-1].clause == c.at[j].clause {
		lo--
	}
	for hi < min(len(c.words), j+maxObjectGap+1) && c.at[hi].clause == c.at[j].clause {
		hi++
	}
	if c.has(max(lo, j-3), j, roleStop|roleCancel) || c.has(max(lo, j-2), j, roleSelf) {
		return false
	}
	return c.objectOf(j, span{lo: lo, hi: hi}, roleObject|rolePerson, 2) >= 0 || c.has(lo, hi, roleRedirect)
}

// thingOpen are the roles of the words a verb's thing may follow: articles and quantifiers, a stop or a
// more word, a courtesy, the person.
const thingOpen = roleArticle | roleStop | roleMore | roleFiller | roleObject | rolePerson

// thingNotOne are the roles of a word that is no thing of its own: a mailing, a verb of contacting or
// removing, data, an opt-out word.
const thingNotOne = roleChannel | roleContact | roleData | roleWord | roleRemove | roleNoun | roleOwner

// thing answers the first word from from in the clause sp that is no article, stop, more word, courtesy or
// the person (up to thingReach of those) when it names a thing that is no mailing (PDFs, attachments,
// Broschüren, des catalogues, facturas), not a link or a number; else -1.
func (c *judgement) thing(from int, sp span) int {
	for j := from; j < min(sp.hi, from+thingReach+1); j++ {
		m := c.marks[j]
		if m&thingOpen != 0 && m&thingNotOne == 0 {
			continue
		}
		if w := c.words[j]; m&thingNotOne == 0 && !link(w) && len(w) > 1 && !isNumber(w) {
			return j
		}
		return -1
	}
	return -1
}

// isNumber says whether w is digits only.
func isNumber(w string) bool {
	for _, r := range w {
		if r < '0' || r > '9' {
			return false
		}
	}
	return true
}

// verbIn answers the last verb of contacting among the words [start, end) (stop sending me: sending), or -1.
func (c *judgement) verbIn(start, end int) int {
	for j := end - 1; j >= start; j-- {
		if c.marks[j]&roleContact != 0 && c.marks[j]&roleChannel == 0 {
			return j
		}
	}
	return -1
}
