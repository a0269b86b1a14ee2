package classify

import (
	"time"

	"github.com/outflowhq/outflow/internal/mail/dsn"
)

// Intent is what a reply means for the campaign that got it.
type Intent string

// The intents a verdict names. The first four are a person's answer (Human); out_of_office and automated
// are not replies.
const (
	Positive    Intent = "positive"
	Negative    Intent = "negative"
	Question    Intent = "question"
	Neutral     Intent = "neutral"
	OutOfOffice Intent = "out_of_office"
	Automated   Intent = "automated"
)

// Intents are every intent, in the order a tie between human intents is broken after unsubscribe requests.
var Intents = []Intent{Negative, Positive, Question, Neutral, OutOfOffice, Automated}

// Human says whether the intent is a person's answer, which counts as a reply.
func (i Intent) Human() bool {
	return i == Positive || i == Negative || i == Question || i == Neutral
}

// Engine names the built-in rules and their version in every verdict they give, so a stored verdict says
// which rules judged it.
const Engine = "rules/v1"

// Message is what the classifier reads of an inbound message.
type Message struct {
	// Headers are the message's headers by MIME name (any case); the rules read those HeaderNames lists.
	Headers map[string][]string
	// From is the sender's address; FromName their display name.
	From, FromName string
	Subject        string
	// Text and HTML are the bodies; HTML is read only when Text is empty.
	Text, HTML string
	// Report is the delivery or complaint report the message is, as dsn.Parse reads it; nil for any other.
	Report *dsn.Report
	// Received is when the message arrived; return dates are read relative to it (now when zero).
	Received time.Time
}

// Keywords are a campaign's reply_intent keywords, which extend the built-in phrases for its replies.
type Keywords struct {
	Positive, Negative, OutOfOffice, Question []string
}

// Evidence is one thing that decided a verdict: Kind is header, report, subject, phrase, keyword or rule;
// Name what it is (a header's name, a phrase's intent, a rule's name) and Value what was found.
type Evidence struct {
	Kind  string `json:"kind"`
	Name  string `json:"name"`
	Value string `json:"value"`
}

// Verdict is what a classifier says about a message.
type Verdict struct {
	Intent Intent
	// Confidence is how sure the engine is, 0..1.
	Confidence float64
	// Evidence is never empty: what decided the intent, first the strongest.
	Evidence []Evidence
	// Unsubscribe says the sender asked to be unsubscribed (the intent is then negative, whatever else the
	// reply says); a reply that only mentions opting out is none.
	Unsubscribe bool
	// ReturnDate is the day an out-of-office sender says they are back (midnight UTC of that calendar day),
	// nil when not stated or not believable.
	ReturnDate *time.Time
	// Language is the message's language as far as the rules tell (en, de, fr, es).
	Language string
	// Engine names the engine that judged (Engine for the built-in rules).
	Engine string
}

// Classifier judges inbound messages; a deployment may plug in another engine. It must be safe for concurrent
// use, read no clock (now is given) and always answer a verdict with evidence.
type Classifier interface {
	Classify(m Message, extra Keywords, now time.Time) Verdict
}
