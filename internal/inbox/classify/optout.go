package classify

import (
	"slices"
	"strings"
	"unicode/utf8"
)

// optOut is what a person's text says about opting out: the requests that decide an unsubscribe, and the
// mentions set aside (each with why), which explain a verdict that is not one.
type optOut struct {
	requests, mentions []Evidence
	// invited says the only request is the word our message invited (reply "no" to opt out).
	invited bool
	// refusal is a whole message that is a bare no (negative, not a request unless our message invited it).
	refusal string
	// negations are the words that negated an opt-out phrase (no need to unsubscribe me): no decline.
	negations []int
}

// Bounds of the opt-out rules: how short a whole-message answer is, how far a negation or a wish is looked
// for, and how much of a clause evidence quotes.
const (
	maxWholeWords = 12
	maxCandidate  = 3
	cancelWindow  = 4
	maxClauseText = 100
)

// linking are the words that join a noun to the opt-out word after it (the link to unsubscribe, lien de
// désinscription, Link zum Abmelden, enlace para darse de baja).
var linking = map[string]bool{"to": true, "for": true, "de": true, "du": true, "zum": true, "zur": true, "del": true,
	"para": true, "pour": true}

// readOptOut finds the requests and mentions in the person's text (c.words): a whole message or clause of
// opt-out words, the unsubscribe phrases among hits unless a mention rule sets one aside, a negated contact
// (a verb of contacting the person, or a noun of mailings, with a stop and a more word near it), a removal
// of the person or their data, and the person's objection (see removal.go); with none, a short answer that
// is the word our quoted message invited for opting out, else a bare no.
func (c *judgement) readOptOut(hits []hit) {
	c.marks = c.r.markers.mark(c.words)
	c.joinSeparable()
	if len(c.words) == 0 {
		c.subjectOptOut()
		return
	}
	candidate := c.wholeMessage()
	if len(c.opt.requests) == 0 {
		c.standalone()
	}
	var covered []bool
	for _, h := range hits {
		if h.class != classUnsubscribe {
			continue
		}
		if covered == nil {
			covered = make([]bool, len(c.words))
		}
		for i := h.start; i < h.end; i++ {
			covered[i] = true
		}
		c.judgeHit(h)
	}
	c.negatedContact(covered)
	if len(c.opt.requests) == 0 {
		c.removals(covered)
	}
	if len(c.opt.requests) == 0 {
		c.objections()
	}
	if len(c.opt.requests) > 0 || len(candidate) == 0 {
		return
	}
	quote := c.html
	if quote != "" {
		quote = htmlQuoted(quote)
	} else {
		quote = quoted(c.lines, c.cut)
	}
	if ev, ok := c.r.invited(candidate, quote); ok {
		c.request(ev)
		c.opt.invited = true
		return
	}
	if c.r.markers.all(candidate, roleRefusal) {
		c.opt.refusal = joinWords(candidate)
	}
}

// request and mention keep at most maxEvidence of each, which is all a verdict shows; a mention judged again at
// another word of its phrase (tragen Sie mich nicht aus) is kept once.
func (c *judgement) request(ev Evidence) {
	if len(c.opt.requests) < maxEvidence {
		c.opt.requests = append(c.opt.requests, ev)
	}
}

func (c *judgement) mention(why string, lo, hi int) {
	ev := Evidence{Kind: "rule", Name: "opt_out_mention", Value: why + ": " + c.text(lo, hi)}
	if n := len(c.opt.mentions); n < maxEvidence && (n == 0 || c.opt.mentions[n-1] != ev) {
		c.opt.mentions = append(c.opt.mentions, ev)
	}
}

// text is the words [lo, hi) as evidence quotes them, cut after maxClauseText bytes.
func (c *judgement) text(lo, hi int) string {
	var b strings.Builder
	for i := lo; i < hi && b.Len() < maxClauseText; i++ {
		if i > lo && !strings.HasSuffix(c.words[i-1], "'") {
			b.WriteByte(' ')
		}
		b.WriteString(c.words[i])
	}
	s := b.String()
	if len(s) > maxClauseText {
		s = strings.ToValidUTF8(s[:maxClauseText], "")
	}
	return s
}

// wholeMessage requests an unsubscribe when the whole text is opt-out words, leaving out greetings,
// courtesies, the sender's name, an initial of it before the name or last (No thanks. J. Meyer) and a
// one-word sign-off line (STOP; Unsubscribe please; Bitte austragen). It answers the words that are left when
// they are few (a candidate for an invited word or a bare no).
func (c *judgement) wholeMessage() []string {
	if len(c.words) > maxWholeWords {
		return nil
	}
	names := nameWords(c.from, c.fromName)
	initials := map[string]bool{}
	for w := range names {
		r, _ := utf8.DecodeRuneInString(w)
		initials[string(r)] = true
	}
	var left []string
	words := 0
	for i, w := range c.words {
		switch {
		case c.marks[i]&roleWord != 0:
			words++
		case c.marks[i]&roleFiller != 0 || names[w]:
			continue
		case len(w) == 1 && initials[w] && (i+1 == len(c.words) || names[c.words[i+1]]):
			continue // an initial of the sender's name before their name or last (J. Meyer; M.-L.)
		case i == len(c.words)-1 && i > 0 && c.at[i].clause != c.at[i-1].clause && len(left) > 0:
			continue // a sign-off name or initials on their own line
		}
		left = append(left, w)
	}
	if words > 0 && words == len(left) {
		c.request(Evidence{Kind: "rule", Name: "opt_out_word", Value: joinWords(left)})
		return nil
	}
	if len(left) > maxCandidate {
		return nil
	}
	return left
}

// subjectOptOut requests an unsubscribe for a message without text whose subject is opt-out words (a mail
// client's unsubscribe message: Subject: unsubscribe).
func (c *judgement) subjectOptOut() {
	var left []string
	marks := c.r.markers.mark(c.subjectWords)
	for i, w := range c.subjectWords {
		if marks[i]&roleFiller != 0 || replyPrefix[w] {
			continue
		}
		if marks[i]&roleWord == 0 {
			return
		}
		left = append(left, w)
	}
	if len(left) > 0 {
		c.request(Evidence{Kind: "subject", Name: "unsubscribe", Value: joinWords(left)})
	}
}

// replyPrefix are the subject prefixes of replies and forwards in the four languages.
var replyPrefix = map[string]bool{"re": true, "aw": true, "fw": true, "fwd": true, "wg": true, "tr": true, "rv": true,
	"rif": true, "antw": true, "sv": true, "res": true}

// nameWords are the words of the sender's name and address, which a whole-message answer may be signed with.
func nameWords(from, name string) map[string]bool {
	out := map[string]bool{}
	local, _, _ := strings.Cut(from, "@")
	for _, w := range tokens(fold(name + " " + strings.NewReplacer(".", " ", "_", " ", "-", " ").Replace(local))) {
		out[w] = true
	}
	return out
}

// standalone requests an unsubscribe for each clause that is opt-out words alone ("STOP." in a longer
// text), unless it is quoted or a link follows it (a pasted footer: "Unsubscribe: https://…").
func (c *judgement) standalone() {
	for lo := 0; lo < len(c.words); {
		hi := c.clauseEnd(lo)
		words, quoted := 0, true
		ok := true
		for i := lo; i < hi && ok; i++ {
			switch {
			case c.marks[i]&roleWord != 0:
				words++
			case c.marks[i]&roleFiller == 0:
				ok = false
			}
			quoted = quoted && c.at[i].quoted
		}
		if ok && words > 0 && !quoted && !(hi < len(c.words) && link(c.words[hi])) {
			c.request(Evidence{Kind: "rule", Name: "opt_out_word", Value: c.text(lo, hi)})
			return
		}
		lo = hi
	}
}

func link(w string) bool {
	return w == "http" || w == "https" || w == "www"
}

// clauseEnd is the end of the clause that starts at lo.
func (c *judgement) clauseEnd(lo int) int {
	hi := lo + 1
	for hi < len(c.words) && c.at[hi].clause == c.at[lo].clause {
		hi++
	}
	return hi
}

// span is one clause of the person's text and what the opt-out rules ask of it, read once (the rules visit
// the clauses in text order), so that a long text costs time in proportion to its length.
type span struct {
	// lo and hi are the clause's words.
	lo, hi int
	// link says the clause holds a link (http, www).
	link bool
	// mention and self are the first mention cue and the first word naming the person as subject; hi when none.
	mention, self int
	// sends are the verbs of contacting with the person as their subject before them and no object just
	// before them (we send emails); see sends.
	sends []int
	// blocker says the clause holds a time bound or an idiom; redirect that its sentence holds a redirect.
	blocker, redirect bool
}

// clause answers the span of the clause holding word i.
func (c *judgement) clause(i int) span {
	if c.span.hi > i && c.span.lo <= i {
		return c.span
	}
	lo := i
	for lo > 0 && c.at[lo-1].clause == c.at[i].clause {
		lo--
	}
	hi := c.clauseEnd(i)
	sp := span{lo: lo, hi: hi, mention: hi, self: hi}
	for j := lo; j < hi; j++ {
		m := c.marks[j]
		sp.link = sp.link || link(c.words[j])
		sp.blocker = sp.blocker || m&roleBlocker != 0
		if m&roleMention != 0 && sp.mention == hi {
			sp.mention = j
		}
		if m&roleContact != 0 && m&roleChannel == 0 && sp.self < j && !c.has(max(lo, j-2), j+1, roleObject) {
			sp.sends = append(sp.sends, j)
		}
		if m&roleSelf != 0 && sp.self == hi {
			sp.self = j
		}
	}
	sp.redirect = c.sentence(i).redirect
	c.span = sp
	return sp
}

// sends says whether the person speaks of mailings they send themselves before the noun of mailings at i: a
// verb of contacting after the person as its subject, without an object of its own within two words (up to
// the noun).
func (c *judgement) sends(sp span, i int) bool {
	for _, j := range sp.sends {
		if j < i && !c.has(j+1, min(i+1, j+3), roleObject) {
			return true
		}
	}
	return false
}

// sentenceFacts are what the opt-out rules ask of a whole sentence, read once per sentence.
type sentenceFacts struct {
	// redirect says the sentence holds a redirect (email my colleague instead); law that it names a
	// data-protection law (GDPR, DSGVO, RGPD); hypothetical that it is a question opening with a condition
	// on the person (If we sign up, can we delete our data later? Si je m'inscris, pouvez-vous …?); impersonal
	// that it is a question opening with a condition on an impersonal subject (si l'on essaie, …; wenn man …).
	redirect, law, hypothetical, impersonal bool
}

// sentence answers the facts of the sentence holding word i (read once per sentence).
func (c *judgement) sentence(i int) sentenceFacts {
	id := c.at[i].sentence
	if c.sentenceRead && c.sentenceID == id {
		return c.sentenceFacts
	}
	lo, hi := i, i+1
	for lo > 0 && c.at[lo-1].sentence == id {
		lo--
	}
	for hi < len(c.words) && c.at[hi].sentence == id {
		hi++
	}
	c.sentenceRead, c.sentenceID = true, id
	c.sentenceFacts = sentenceFacts{redirect: c.has(lo, hi, roleRedirect), law: c.has(lo, hi, roleLaw)}
	first := lo
	for first < hi && c.marks[first]&(roleFiller|roleReported) == roleFiller {
		first++
	}
	condition := c.at[lo].question && first < hi && c.marks[first]&roleReported != 0
	c.sentenceFacts.hypothetical = condition && c.has(first+1, min(hi, first+4), roleSelf)
	c.sentenceFacts.impersonal = condition && c.has(first+1, min(hi, first+4), roleImpersonal)
	return c.sentenceFacts
}

// hypothetical says whether the opt-out words [start, end) stand in a question opening with a condition on
// the person (if we sign up, can we unsubscribe later?) or on an impersonal subject, when neither the person
// nor their data is the object near the words (if one tries it and it does not suit, can one opt out easily?;
// wenn man …, kann man sich abmelden?). The person as the object keeps a polite request one (if you can,
// could you remove me?; if you would, can you delete my data?).
func (c *judgement) hypothetical(start, end int, sp span) bool {
	f := c.sentence(start)
	return f.hypothetical || f.impersonal && !c.has(max(sp.lo, start-2), min(sp.hi, end+2), rolePerson|roleOwner)
}

// has says whether a word of [lo, hi) plays rl.
func (c *judgement) has(lo, hi int, rl role) bool {
	for i := max(lo, 0); i < min(hi, len(c.marks)); i++ {
		if c.marks[i]&rl != 0 {
			return true
		}
	}
	return false
}

// judgeHit takes an unsubscribe phrase for a request unless its clause only talks about opting out: the
// phrase is quoted, negated just before (don't remove me) or after it (löschen Sie meine Daten nicht), in a
// question on a condition of the person's (if we sign up, can we unsubscribe later?), is told as a story of
// the past or as the person's habit (I usually unsubscribe from these; see narrated, habitual), names a thing (the
// unsubscribe link, a link in the clause), follows reported speech, an instruction or a reader-addressed
// condition (you said, reply, if you want, my colleague), or, without an opt-out word or a word of removing
// in it, is bounded in time or by an idiom (don't contact me until March) or redirected (don't email me,
// email my colleague instead). Said by the person with a wish or an attempt (I tried to unsubscribe), it is
// a request all the same.
func (c *judgement) judgeHit(h hit) {
	sp := c.clause(h.start)
	lo, hi := sp.lo, sp.hi
	quoted := true
	for i := h.start; i < h.end; i++ {
		quoted = quoted && c.at[i].quoted
	}
	switch {
	case quoted:
		c.mention("quoted", lo, hi)
	case c.negatedAfter(h.end, sp):
		c.mention("negated", lo, hi)
	case c.cancelled(h.start, lo):
		c.mention("negated", lo, hi)
		for i := lo; i < h.start; i++ {
			if c.marks[i]&roleCancel != 0 {
				c.opt.negations = append(c.opt.negations, i)
			}
		}
	case c.hypothetical(h.start, h.end, sp):
		c.mention("hypothetical", lo, hi)
	case c.narrated(h.start, h.end):
		c.mention("narrated", lo, hi)
	case c.habitual(h.start, sp):
		c.mention("habitual", lo, hi)
	case c.desired(h.start, sp):
		c.request(evidenceOf(h))
	case c.named(h.start, h.end, sp):
		c.mention("named", lo, hi)
	case sp.mention < h.start:
		c.mention("reported", lo, hi)
	case c.anotherThing(c.verbIn(h.start, h.end), h.end-1, sp):
		c.mention("another thing wanted", lo, hi)
	case !c.has(h.start, h.end, roleWord|roleRemove) && sp.blocker:
		c.mention("bounded", lo, hi)
	case !c.has(h.start, h.end, roleWord|roleRemove) && sp.redirect:
		c.mention("redirected", lo, hi)
	default:
		c.request(evidenceOf(h))
	}
}

// cancelled says whether a negation or a hypothetical stands just before start in its clause: only short
// words, wishes and the person may stand between (don't remove me; no need to remove me; I don't want you to
// unsubscribe me; I almost hit unsubscribe), and a courtesy or a conjunction ends the look-back. A German
// infinitive with zu that opens its clause is governed by the clause before it, so a negation of need that
// ends that one cancels it too (es ist nicht nötig, mich auszutragen; kein Grund, meine Daten zu löschen).
func (c *judgement) cancelled(start, lo int) bool {
	for i := start - 1; i >= max(lo, start-cancelWindow); i-- {
		m := c.marks[i]
		switch {
		case m&roleCancel != 0:
			return true
		case m&roleFiller != 0:
			return false
		case len(c.words[i]) > 4 && m&(roleDesire|roleObject|roleSelf) == 0:
			return false
		}
	}
	if lo == 0 || start-lo > cancelWindow || c.at[lo-1].sentence != c.at[lo].sentence || !c.zuInfinitive(lo, start) {
		return false
	}
	return c.has(max(0, lo-2), lo, roleCancel)
}

// zuInfinitive says whether the clause from lo holds, up to cancelWindow words after start, a German
// infinitive with zu: zu before a verb (meine Daten zu löschen) or zu after a verb's particle (auszutragen,
// abzumelden, anzuschreiben).
func (c *judgement) zuInfinitive(lo, start int) bool {
	for j := lo; j < min(len(c.words), start+cancelWindow) && c.at[j].clause == c.at[lo].clause; j++ {
		if w := c.words[j]; w == "zu" || len(w) > 6 && strings.Contains(w[2:len(w)-3], "zu") {
			return true
		}
	}
	return false
}

// desired says whether the person says they want or tried to opt out: a wish or an attempt shortly before
// start, with the person as its subject before it.
func (c *judgement) desired(start int, sp span) bool {
	for i := start - 1; i >= max(sp.lo, start-cancelWindow); i-- {
		if c.marks[i]&roleDesire != 0 {
			return c.marks[i]&roleSelf != 0 || sp.self < i
		}
	}
	return false
}

// named says whether the opt-out words [start, end) name a thing: an article before an opt-out word, a noun of a link
// or a button just after (or shortly before, joined: the link to unsubscribe; le lien pour se désinscrire), or
// a link in the clause.
func (c *judgement) named(start, end int, sp span) bool {
	if start > sp.lo && c.marks[start-1]&roleDeterminer != 0 && c.has(start, end, roleWord) {
		return true
	}
	if c.has(end, min(sp.hi, end+2), roleNoun) {
		return true
	}
	for k := max(sp.lo, start-3); k < start-1; k++ {
		if c.marks[k]&roleNoun != 0 && slices.ContainsFunc(c.words[k+1:start], func(w string) bool { return linking[w] }) {
			return true
		}
	}
	return sp.link
}
