package classify

import "slices"

// role is what a word does in an opt-out request (the data files' optout_* lists); a word may play several.
type role uint64

const (
	// roleWord is a word a whole message or clause may consist of to opt out: STOP, unsubscribe, remove me.
	roleWord role = 1 << iota
	// roleContact is a verb of contacting (contact, email, schreiben): with the sender as its object and a
	// stop and a more word near it, a request.
	roleContact
	// roleChannel is a noun of mailings (emails, Zusendungen): with a stop and a more word near it, a request.
	roleChannel
	// roleObject is the person as the object of a verb of contacting (me, us, mich, m').
	roleObject
	// roleStop is a negation or a verb of stopping (not, never, stop, unterlassen).
	roleStop
	// roleMore is a word of going on (again, any more, further, künftig).
	roleMore
	// roleCancel is a negation that, just before an opt-out phrase, makes it a mention (don't remove me).
	roleCancel
	// roleMention is reported speech, an instruction or a reader-addressed condition (you said, reply, if you
	// want, my colleague): an opt-out phrase after it in its clause is talked about, not asked for.
	roleMention
	// roleNoun is a noun an opt-out word names (link, button): the unsubscribe link is a thing, not a request.
	roleNoun
	// roleDeterminer is an article that makes the opt-out word after it a noun (the, your).
	roleDeterminer
	// roleDesire is trying or wanting (tried, want, asked): said by the person, it keeps a request that names
	// the link or the footer (I tried the unsubscribe link).
	roleDesire
	// roleSelf is the person as the subject (I, we).
	roleSelf
	// roleInvite is a verb of replying, read in our quoted message's invitation (reply STOP to opt out).
	roleInvite
	// roleBlocker is a time bound or an idiom that keeps a negated contact from being a request (until, don't
	// hesitate).
	roleBlocker
	// roleRedirect is a redirect to another person (instead, my colleague): "don't email me, email Raj".
	roleRedirect
	// roleFiller is a greeting or courtesy left out when a whole message is judged (hi, please, thanks); it
	// also ends the look-back for a negation.
	roleFiller
	// roleRefusal is a bare no (no, nein, non), which a whole message may consist of.
	roleRefusal
	// roleRemove is a verb or noun of removing, erasing or forgetting (remove, löschen, l'effacement,
	// eliminen, forget, oubliez, olviden): with the person or their data as its object, a request (see
	// removal.go).
	roleRemove
	// rolePerson is the person as the object of removing (me, mich, moi, m', elimínenme).
	rolePerson
	// roleData is a noun of a person's data or entry (data, Daten, coordonnées, datos, address).
	roleData
	// roleOwner makes data the person's (my, meine, mes, mis, about me, me concernant).
	roleOwner
	// roleLaw is a data-protection law (GDPR, DSGVO, RGPD, Art. 17), which makes data the person's.
	roleLaw
	// roleCausative is a verb that makes the person before a verb its subject (let me remove, lass mich).
	roleCausative
	// roleClosing is a break-up phrase in our quoted message (I'll close your file, je clôture votre
	// dossier) or a question whether the person has no interest (Not interested?, Kein Interesse?, Pas
	// intéressé ?, ¿No le interesa?), which invites a no as an opt-out.
	roleClosing
	// roleReported is reported speech, an instruction or a condition (your email says, reply, if): a decline
	// phrase after it in its clause is someone else's words or hypothetical, no decline.
	roleReported
	// roleImpersonal is an impersonal or generic subject (one, you, man, on, uno, se): a condition on it opens
	// a question about the process as a condition on the person does (if one tries it, can one opt out?).
	roleImpersonal
	// roleThen opens a clause that says what follows (and, then, dann, et, alors, y, entonces): in our quote,
	// the consequence of replying (reply "no", and I won't write again).
	roleThen
	// roleContrast turns a sentence (but, aber, mais, pero): what follows it is set against what came before
	// (I unsubscribed from your newsletter last year, but this is relevant).
	roleContrast
	// rolePast places an act in the past (ago, last year, back in, damals, l'an dernier, hace meses): an
	// opt-out narrated with it is a story, unless the reply says it did not take (see narrated).
	rolePast
	// rolePersist says mail goes on or an opt-out did not take (still, keep, immer noch, toujours, todavía).
	rolePersist
	// roleOppose is objecting (object to, widerspreche, je m'oppose, me opongo): to the processing of the
	// person's data or to mailings, a request (GDPR Art. 21; see objections).
	roleOppose
	// roleAbsent is a third person as the object of a removal (him, ihn, le, lo): the addressee who has left,
	// when the reply says one has (see removable).
	roleAbsent
	// roleAbsentOwner makes data a third person's (his, seine, son, su): the addressee who has left, when the
	// reply says one has (see owns).
	roleAbsentOwner
	// roleArticle is an article, a demonstrative or a quantifier (a, the, all, des, l'ensemble, sämtliche,
	// todos), or the formal imperative's Sie, which stands between a verb and its noun: it does not count in
	// the reach of a removal's data, and it is skipped to find the thing a verb names.
	roleArticle
	// roleCease is a verb of ceasing (stop, aufhören, arrêtez, dejen): negated, it asks mail to go on (don't
	// stop sending these; n'arrêtez pas de m'envoyer vos analyses; no dejen de mandarme sus novedades).
	roleCease
	// roleHabitual says what the person usually does (usually, normalerweise, d'habitude, suelo): an opt-out
	// told with it is a habit, a story of their own like one of the past (see narrated).
	roleHabitual
	// roleGroup is the person's colleagues, team, company, domain or this address as the object of a removal
	// (all of us, our team, anyone else at, unser Team, toute l'équipe, nuestro equipo, cette adresse): their
	// mail reaches the person.
	roleGroup
	// roleIntended is a wish or a plan told in the past (wanted to, wollte, je voulais, quería, iba a): an
	// opt-out the person meant to do and then turned from is a story like one of the past (see narrated).
	roleIntended
)

// roleName names each role as its data list does (optout_<name>).
var roleName = map[role]string{roleWord: "words", roleContact: "contact", roleChannel: "channels", roleObject: "objects",
	roleStop: "stop", roleMore: "more", roleCancel: "cancel", roleMention: "mention", roleNoun: "nouns",
	roleDeterminer: "determiners", roleDesire: "desire", roleSelf: "self", roleInvite: "invite", roleBlocker: "blockers",
	roleRedirect: "redirect", roleFiller: "fillers", roleRefusal: "refusals", roleRemove: "remove", rolePerson: "person",
	roleData: "data", roleOwner: "owner", roleLaw: "law", roleCausative: "causative", roleClosing: "closing",
	roleReported: "reported", roleImpersonal: "impersonal", roleThen: "then", roleContrast: "contrast",
	rolePast: "past", rolePersist: "persist", roleOppose: "oppose", roleAbsent: "absent",
	roleAbsentOwner: "absent_owner", roleArticle: "articles", roleCease: "cease",
	roleHabitual: "habitual", roleGroup: "group", roleIntended: "intended"}

// marker is a phrase of the opt-out lists as words, with the roles it plays.
type marker struct {
	words []string
	roles role
}

// markers find the opt-out lists' phrases by their first word.
type markers map[string][]marker

func (mk markers) add(text string, rl role) {
	w := tokens(fold(text))
	if len(w) == 0 {
		return
	}
	for i, m := range mk[w[0]] {
		if slices.Equal(m.words, w) {
			mk[w[0]][i].roles |= rl
			return
		}
	}
	mk[w[0]] = append(mk[w[0]], marker{words: w, roles: rl})
}

// mark answers the roles each word plays: every phrase found gives its roles to all its words.
func (mk markers) mark(words []string) []role {
	out := make([]role, len(words))
	for i, w := range words {
		for _, m := range mk[w] {
			if i+len(m.words) <= len(words) && slices.Equal(words[i:i+len(m.words)], m.words) {
				for j := i; j < i+len(m.words); j++ {
					out[j] |= m.roles
				}
			}
		}
	}
	return out
}

// all says whether every one of words (at least one) plays rl.
func (mk markers) all(words []string, rl role) bool {
	marks := mk.mark(words)
	for _, m := range marks {
		if m&rl == 0 {
			return false
		}
	}
	return len(words) > 0
}
