package classify

// Bounds of the removal and object rules: how far before a verb its object may stand when only adverbs
// stand between, how far from a verb of removing its data noun is looked for (in words that are no
// articles, and in all words), how far around a data noun its owner, how far after an objection what it
// objects to, and how far before it the person.
const (
	maxObjectGap  = 5
	dataWindow    = 4
	dataReach     = 3 * dataWindow
	objectReach   = 12
	objectorReach = 4
	ownerBefore   = 2
	ownerAfter    = 6
	selfBeforeGap = 2
)

// particles are the short words that stand between a pronoun and its verb in the four languages (mich
// nicht weiter zu kontaktieren, me vuelvan a escribir, to).
var particles = map[string]bool{"to": true, "zu": true, "a": true, "de": true, "d'": true}

// adverb says whether word j may stand between a pronoun and the verb after it: a negation or a stop word,
// a word of going on, a courtesy or a particle (mich nicht weiter anzuschreiben; me vuelvan a escribir; ne
// plus m'envoyer).
func (c *judgement) adverb(j int) bool {
	return c.marks[j]&(roleStop|roleMore|roleFiller) != 0 || particles[c.words[j]]
}

// objectOf answers where the person, a word playing rl, stands as the object of the verb at i in the clause
// sp, or -1: the verb itself (contactarme, elimínenme), a word up to two after it (contact me, remove me,
// retirez-moi) or farther after it with only adverbs, articles and quantifiers between (no contacten más a
// nadie; remove all of us), a word up to near
// before it (be contacted), or one farther before with only adverbs between (mich nicht weiter
// anzuschreiben; que me eliminen; me vuelvan a escribir), up to maxObjectGap; never a pronoun after a
// causative, whose verb is the person's own (let me remove).
func (c *judgement) objectOf(i int, sp span, rl role, near int) int {
	if c.marks[i]&rl != 0 {
		return i
	}
	for j, between := i+1, true; j < min(sp.hi, i+1+maxObjectGap) && (j < i+3 || between); j++ {
		if c.marks[j]&rl != 0 {
			return j
		}
		between = between && (c.adverb(j) || c.marks[j]&roleArticle != 0) // remove all of us
	}
	between := true
	for j := i - 1; j >= max(sp.lo, i-maxObjectGap); j-- {
		if c.marks[j]&rl != 0 && (i-j <= near || between) && (j == sp.lo || c.marks[j-1]&roleCausative == 0) {
			return j
		}
		between = between && c.adverb(j)
		if !between && i-j >= near {
			break
		}
	}
	return -1
}

// removals requests an unsubscribe for a verb or noun of removing, or of forgetting, whose object is the
// person, their group or this address (remove me; que me eliminen; retirez-moi; meine Austragung; forget me;
// oubliez cette adresse) or the person's data (erase any personal data you hold about
// me; die Löschung meiner Daten; l'effacement de mes données; under GDPR, delete the data you hold), unless
// it only talks about it: quoted, negated (don't remove me; no need to delete my data; löschen Sie meine
// Daten nicht), in a question on a condition of the person's or an impersonal one's (if I sign up, will you
// delete my data later?; see hypothetical),
// told as a story of the past or a habit the reply turns from (I usually unsubscribe, but …; see narrated),
// after reported speech or a reader-addressed condition (your footer says it removes me), or, for data or the
// person's team, done by the person themselves (can we delete our data?; we removed our team from the rota). Words an unsubscribe phrase covered are that phrase's.
func (c *judgement) removals(covered []bool) {
	judged := -1
	for i, m := range c.marks {
		if m&roleRemove == 0 || (covered != nil && covered[i]) {
			continue
		}
		if judged >= 0 && judged == i-1 && c.at[judged].clause == c.at[i].clause {
			judged = i // the rest of a phrase of removing judged at its head (dé de baja)
			continue
		}
		sp := c.clause(i)
		from, to, name := i, i+1, "opt_out_request"
		j := c.objectOf(i, sp, c.removable(), 0)
		if j >= 0 && c.marks[j]&rolePerson == 0 {
			if d, owner := c.personalData(i, sp); d >= 0 && owner == j {
				j = -1 // the absent addressee owns the data: remove his address
			}
		}
		if j >= 0 {
			from, to = min(i, j), max(i, j)+1
			for to < sp.hi && c.marks[to]&roleGroup != 0 && c.marks[to-1]&roleGroup != 0 {
				to++ // the whole group: all of us, toute l'équipe
			}
		} else if i > sp.lo && c.marks[i-1]&roleOwner != 0 {
			from = i - 1 // my removal, meine Austragung, mi baja
		} else if d, owner := c.personalData(i, sp); d >= 0 {
			from, to, name = min(i, d, max(owner, d)), max(i, d, owner)+1, "erasure_request"
		} else {
			continue
		}
		judged = i
		switch {
		case c.at[i].quoted:
			c.mention("quoted", sp.lo, sp.hi)
		case c.cancelled(i, sp.lo) || c.negatedAfter(to, sp):
			c.mention("negated", sp.lo, sp.hi)
			for k := max(sp.lo, i-cancelWindow); k < i; k++ {
				if c.marks[k]&roleCancel != 0 {
					c.opt.negations = append(c.opt.negations, k)
				}
			}
		case c.hypothetical(from, to, sp):
			c.mention("hypothetical", sp.lo, sp.hi)
		case c.narrated(from, to):
			c.mention("narrated", sp.lo, sp.hi)
		case c.habitual(from, sp):
			c.mention("habitual", sp.lo, sp.hi)
		case sp.mention < from && !c.desired(from, sp):
			c.mention("reported", sp.lo, sp.hi)
		case (name == "erasure_request" || j >= 0 && c.marks[j]&(rolePerson|roleAbsent) == 0) && c.doesItself(i, sp):
			c.mention("the person's own", sp.lo, sp.hi)
		default:
			c.request(Evidence{Kind: "rule", Name: name, Value: c.text(from, to)})
			return
		}
	}
}

// personalData answers a noun of data within dataWindow words of the removal word at i in the clause sp that
// is the person's, and its owner: an owner up to ownerBefore words before it in the clause (my personal
// data, meiner Daten, mes données) or one naming the person up to ownerAfter after it in its sentence (any
// data you hold about me; alle Daten, die Sie über mich gespeichert haben; données me concernant; not los
// datos de nuestros clientes, whose owner owns the clients), or, with a data-protection law
// named in the sentence, none (owner -1); d is -1 when there is no such noun. Articles and quantifiers do
// not count in the reach (l'effacement de l'ensemble des données me concernant; löschen Sie sämtliche bei
// Ihnen gespeicherten Daten), and the owner may be the addressee who has left (see owns).
func (c *judgement) personalData(i int, sp span) (d, owner int) {
	from, to := i, i+1
	for n := 0; from > max(sp.lo, i-dataReach) && n < dataWindow; from-- {
		if c.marks[from-1]&roleArticle == 0 {
			n++
		}
	}
	for n := 0; to < min(sp.hi, i+dataReach+1) && n < dataWindow; to++ {
		if c.marks[to]&roleArticle == 0 || c.marks[to]&roleData != 0 {
			n++
		}
	}
	for n := from; n < to; n++ {
		if c.marks[n]&roleData == 0 || n == i {
			continue
		}
		for k := max(sp.lo, n-ownerBefore); k < n; k++ {
			if c.owns(k) {
				return n, k
			}
		}
		for k := n + 1; k < min(len(c.words), n+ownerAfter+1) && c.at[k].sentence == c.at[n].sentence; k++ {
			if c.marks[k]&roleOwner != 0 && c.marks[k]&rolePerson != 0 {
				for k+1 < len(c.words) && c.marks[k+1]&roleOwner != 0 {
					k++ // the whole owner phrase: about me, me concernant
				}
				return n, k
			}
		}
		if c.sentence(i).law {
			return n, -1
		}
	}
	return -1, -1
}

// doesItself says whether the person is the subject just before the removal word at i, so the removal is
// their own doing (can we delete our data; I deleted my details; we removed our team from the old tool),
// unless a wish stands between (I want to delete my data).
func (c *judgement) doesItself(i int, sp span) bool {
	for j := i - 1; j >= max(sp.lo, i-selfBeforeGap); j-- {
		m := c.marks[j]
		if m&roleDesire != 0 {
			return false
		}
		if m&roleSelf != 0 && m&rolePerson == 0 {
			return true
		}
	}
	return false
}

// negatedAfter says whether a negation ends the clause sp after the phrase ending at end, alone or before
// one short verb particle: the German order (löschen Sie meine Daten bitte nicht; melden Sie mich nicht ab),
// never a negation of another word (take me off your list, I'm not interested).
func (c *judgement) negatedAfter(end int, sp span) bool {
	for j := end; j < min(sp.hi, end+cancelWindow); j++ {
		if c.marks[j]&roleCancel != 0 && c.marks[j]&roleStop != 0 {
			return j == sp.hi-1 || (j == sp.hi-2 && len(c.words[sp.hi-1]) <= 3)
		}
	}
	return false
}

// removable are the roles of the object of a removal: the person, their colleagues, team, company or domain
// (remove all of us, and anyone else at our domain; nehmen Sie unser ganzes Team aus dem Verteiler; retirez
// toute l'équipe; eliminen a todo el equipo), and the addressee who has left when the reply says one has (Tom left the company, please remove him; Herr Kühn hat das Unternehmen verlassen,
// bitte entfernen Sie ihn; M. Garnier a quitté l'entreprise, merci de le retirer; el Sr. Ruiz ya no trabaja
// aquí, elimínenlo). Their mail reaches the person, who asks it to stop.
func (c *judgement) removable() role {
	if len(c.departedHits) > 0 {
		return rolePerson | roleGroup | roleAbsent
	}
	return rolePerson | roleGroup
}

// owns says whether word k makes data the person's: an owner (my, meine, mes, mis), or, when the reply says
// the addressee has left, a word naming them (his address, seine Adresse, son adresse, su dirección).
func (c *judgement) owns(k int) bool {
	return c.marks[k]&roleOwner != 0 || c.marks[k]&roleAbsentOwner != 0 && len(c.departedHits) > 0
}

// objections requests an unsubscribe for the person's objection (GDPR Art. 21: I object to, ich
// widerspreche, je m'oppose, me opongo) to what follows it in its clause: the processing of the person's
// data (their data or, with a data-protection law in the sentence, data), mailings or being contacted (I
// object to the processing of my personal data for direct marketing; Widerspruch gegen die Nutzung meiner
// Daten; je m'oppose au traitement de mes données à des fins de prospection; me opongo al tratamiento de mis
// datos). The objection is the person's when the verb says so (widerspreche, opongo), the person stands
// before it in its clause (I, wir, je m'), or a law is named; someone else's is none (my CFO will object to
// the marketing budget; l'opposition de nos clients à la prospection). An objection is declared, not asked:
// in a question it asks about the process (how do we handle the right to object to marketing?). It only
// talks about it, too, when quoted, negated (je ne m'oppose pas …) or after reported speech.
func (c *judgement) objections() {
	for i, m := range c.marks {
		if m&roleOppose == 0 || (i > 0 && c.marks[i-1]&roleOppose != 0) {
			continue
		}
		sp := c.clause(i)
		if !c.sentence(i).law && !c.objector(i, sp) {
			continue
		}
		to := -1
		for n := i + 1; n < min(sp.hi, i+objectReach+1) && to < 0; n++ {
			switch {
			case c.marks[n]&(roleChannel|roleContact) != 0:
				to = n + 1
			case c.marks[n]&roleData != 0 && (c.sentence(i).law || c.has(max(sp.lo, n-ownerBefore), n, roleOwner)):
				to = n + 1
			}
		}
		if to < 0 {
			continue
		}
		for to < sp.hi && c.marks[to]&roleData != 0 {
			to++ // the whole noun: personal data
		}
		switch {
		case c.at[i].quoted:
			c.mention("quoted", sp.lo, sp.hi)
		case c.cancelled(i, sp.lo) || c.negatedAfter(to, sp):
			c.mention("negated", sp.lo, sp.hi)
		case c.at[i].question:
			c.mention("asked", sp.lo, sp.hi)
		case sp.mention < to:
			c.mention("reported", sp.lo, sp.hi)
		default:
			c.request(Evidence{Kind: "rule", Name: "objection_request", Value: c.text(i, to)})
			return
		}
	}
}

// objector says whether the person objects at i: the word itself is the person's (widerspreche, opongo) or
// the person stands up to objectorReach words before it in its clause as its subject or pronoun (I object;
// I exercise my right to object; wir widersprechen; je m'oppose; nos oponemos), not as an owner of someone
// else (my CFO will object).
func (c *judgement) objector(i int, sp span) bool {
	for j := max(sp.lo, i-objectorReach); j <= i; j++ {
		if m := c.marks[j]; m&(roleSelf|rolePerson) != 0 && m&roleOwner == 0 {
			return true
		}
	}
	return false
}
