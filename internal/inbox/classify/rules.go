package classify

import (
	"fmt"
	"strings"
	"sync"
	"time"
)

// Rules is the built-in engine (Engine): deterministic, every verdict explained by its evidence. See the
// package doc for its stages. Build it with NewRules; it is safe for concurrent use.
type Rules struct {
	human, ooo, automated, departed    index
	oooSubject, autoReply, autoSubject index
	weekdays                           map[string]bool
	// longWeekdays are the weekdays of five letters or more, which a longer word may start with (montags).
	longWeekdays           []string
	triggers               map[string][]trigger
	months                 map[string]int
	stopwords              map[string]string
	negations              map[string]bool
	quoteMarkers           []string
	quoteSeparators        []string
	quoteFrom, quoteFields []string
	// quoteLeads and quoteVerbs make an attribution line (On … wrote:, Am … schrieb …:).
	quoteLeads map[string]bool
	quoteVerbs [][]string
	signoffs   []string
	// markers are the opt-out lists' phrases with their roles (see optout.go).
	markers markers
}

var (
	builtin     *Rules
	builtinErr  error
	builtinOnce sync.Once
)

// NewRules answers the built-in rules over the embedded lists (read once per process). It fails only when
// the embedded data cannot be read, which the package's tests rule out.
func NewRules() (*Rules, error) {
	builtinOnce.Do(func() {
		data, err := readData()
		if err != nil {
			builtinErr = err
			return
		}
		builtin = build(data)
	})
	return builtin, builtinErr
}

func build(data map[string]list) *Rules {
	r := &Rules{human: index{}, ooo: index{}, automated: index{}, departed: index{}, oooSubject: index{},
		autoReply: index{}, autoSubject: index{}, weekdays: map[string]bool{},
		triggers: map[string][]trigger{}, months: map[string]int{}, stopwords: map[string]string{}, negations: map[string]bool{},
		quoteLeads: map[string]bool{}, markers: markers{}}
	for _, lang := range Languages {
		l := data[lang]
		for c, entries := range map[class][]string{classPositive: l.Positive, classNegative: l.Negative,
			classQuestion: l.Question, classNeutral: l.Neutral, classUnsubscribe: l.Unsubscribe} {
			for _, e := range entries {
				r.human.add(e, c, lang, false)
			}
		}
		for _, e := range l.OOOBody {
			r.ooo.add(e, classOOO, lang, false)
		}
		for _, e := range l.AutomatedBody {
			r.automated.add(e, classAutomated, lang, false)
		}
		for _, e := range l.Departed {
			r.departed.add(e, classAutomated, lang, false)
		}
		for _, e := range l.AutoReplySubject {
			r.autoReply.add(e, classAutomated, lang, false)
		}
		for _, w := range l.Weekdays {
			r.weekdays[fold(w)] = true
			if len(fold(w)) >= 5 {
				r.longWeekdays = append(r.longWeekdays, fold(w))
			}
		}
		for _, e := range l.OOOSubject {
			r.oooSubject.add(e, classOOO, lang, false)
		}
		for _, e := range l.AutomatedSubject {
			r.autoSubject.add(e, classAutomated, lang, false)
		}
		for back, entries := range map[bool][]string{true: l.ReturnTriggers, false: l.UntilTriggers} {
			for _, e := range entries {
				if w := tokens(fold(e)); len(w) > 0 {
					r.triggers[w[0]] = append(r.triggers[w[0]], trigger{words: w, back: back})
				}
			}
		}
		for m, n := range l.Months {
			r.months[fold(m)] = n
		}
		for _, w := range l.Stopwords {
			if _, taken := r.stopwords[fold(w)]; !taken {
				r.stopwords[fold(w)] = lang
			}
		}
		for _, w := range l.Negations {
			r.negations[fold(w)] = true
		}
		r.quoteMarkers = append(r.quoteMarkers, folded(l.QuoteMarkers)...)
		r.quoteSeparators = append(r.quoteSeparators, folded(l.QuoteSeparators)...)
		r.quoteFrom = append(r.quoteFrom, folded(l.QuoteFrom)...)
		r.quoteFields = append(r.quoteFields, folded(l.QuoteFields)...)
		r.signoffs = append(r.signoffs, folded(l.Signoffs)...)
		for _, w := range l.QuoteLeads {
			r.quoteLeads[fold(w)] = true
		}
		for _, v := range l.QuoteVerbs {
			r.quoteVerbs = append(r.quoteVerbs, tokens(fold(v)))
		}
		for rl, entries := range l.roles() {
			for _, e := range entries {
				r.markers.add(e, rl)
			}
		}
	}
	return r
}

func folded(in []string) []string {
	out := make([]string, len(in))
	for i, s := range in {
		out[i] = fold(s)
	}
	return out
}

// Bounds on what one verdict reads of the subject and the reply's own words.
const (
	maxSubjectWords = 40
	maxBodyWords    = 3000
	maxEvidence     = 6
)

// Classify judges m (see the package doc); extra are the campaign's keywords; now stands in for a missing
// received time.
func (r *Rules) Classify(m Message, extra Keywords, now time.Time) Verdict {
	received := m.Received
	if received.IsZero() {
		received = now
	}
	if m.Report != nil {
		return Verdict{Intent: Automated, Confidence: 1, Engine: Engine, Language: "en",
			Evidence: []Evidence{{Kind: "report", Name: string(m.Report.Kind), Value: string(m.Report.Shape)}}}
	}
	text, html := m.Text, ""
	if strings.TrimSpace(text) == "" {
		text, html = htmlText(m.HTML), m.HTML
	}
	own, lines, cut := r.split(text)
	subject := fold(m.Subject)
	subjectWords := limit(tokens(subject), maxSubjectWords)
	words, at := segment(fold(own))
	words, at = limit(words, maxBodyWords), limit(at, maxBodyWords)
	kw := keywordIndex(extra)
	c := judgement{r: r, words: words, at: at, subjectWords: subjectWords, received: received, from: m.From,
		fromName: m.FromName, lines: lines, cut: cut, html: html, dateText: strings.Join(strings.Fields(subject+"\n"+fold(own)), " ")}
	c.lang = r.language(words, subjectWords)
	c.oooSubject, c.isOOOSubject = prefixed(subjectWords, r.oooSubject)
	c.autoSubject, c.isAutoSubject = prefixed(subjectWords, r.autoSubject)
	c.autoReply, c.isAutoReply = prefixed(subjectWords, r.autoReply)
	c.oooHits = find(words, r.ooo, kw.ooo)
	c.autoHits = find(words, r.automated)
	c.departedHits = find(words, r.departed)
	hits := find(words, r.human, kw.human)
	c.readOptOut(hits)
	c.score(hits, strings.Count(own, "?"))
	c.proposesTime(own)
	strong, weak, listOnly := r.headers(m)
	v := c.decide(strong, weak, listOnly)
	v.Engine, v.Language = Engine, c.lang
	if len(v.Evidence) > maxEvidence {
		v.Evidence = v.Evidence[:maxEvidence]
	}
	return v
}

func limit[T any](w []T, n int) []T {
	return w[:min(len(w), n)]
}

// extraIndex are a campaign's keywords as phrases.
type extraIndex struct {
	human, ooo index
}

func keywordIndex(k Keywords) extraIndex {
	out := extraIndex{human: index{}, ooo: index{}}
	for c, entries := range map[class][]string{classPositive: k.Positive, classNegative: k.Negative, classQuestion: k.Question} {
		for _, e := range entries {
			out.human.add(e, c, "", true)
		}
	}
	for _, e := range k.OutOfOffice {
		out.ooo.add(e, classOOO, "", true)
	}
	return out
}

// language is the language with the most stop words among words (subject words count when the body has
// none); English on a tie or without any.
func (r *Rules) language(words, subjectWords []string) string {
	count := map[string]int{}
	if len(words) == 0 {
		words = subjectWords
	}
	for _, w := range words {
		if lang, ok := r.stopwords[w]; ok {
			count[lang]++
		}
	}
	best := "en"
	for _, lang := range Languages {
		if count[lang] > count[best] {
			best = lang
		}
	}
	return best
}

func evidenceOf(h hit) Evidence {
	kind := "phrase"
	if h.keyword {
		kind = "keyword"
	}
	return Evidence{Kind: kind, Name: className[h.class], Value: h.text}
}

var className = map[class]string{classPositive: "positive", classNegative: "negative", classQuestion: "question",
	classNeutral: "neutral", classUnsubscribe: "unsubscribe", classOOO: "out_of_office", classAutomated: "automated"}

func (e Evidence) String() string { return fmt.Sprintf("%s:%s=%s", e.Kind, e.Name, e.Value) }
