package classify

import (
	"embed"
	"encoding/json"
	"fmt"
	"path"
	"slices"
	"strings"
)

//go:embed data/*.json
var dataFS embed.FS

// Languages are the languages the built-in lists cover, in the order a tie between them is broken.
var Languages = []string{"en", "de", "fr", "es"}

// list is one language's data file: the phrases of each intent and the words the text rules read. Every entry
// is lower-case; phrases are compared after fold (accents and punctuation do not matter).
type list struct {
	Stopwords        []string       `json:"stopwords"`
	Positive         []string       `json:"positive"`
	Negative         []string       `json:"negative"`
	Unsubscribe      []string       `json:"unsubscribe"`
	Question         []string       `json:"question"`
	Neutral          []string       `json:"neutral"`
	OOOSubject       []string       `json:"ooo_subject"`
	AutoReplySubject []string       `json:"auto_reply_subject"`
	OOOBody          []string       `json:"ooo_body"`
	AutomatedSubject []string       `json:"automated_subject"`
	AutomatedBody    []string       `json:"automated_body"`
	Departed         []string       `json:"departed"`
	ReturnTriggers   []string       `json:"return_triggers"`
	UntilTriggers    []string       `json:"until_triggers"`
	Months           map[string]int `json:"months"`
	Weekdays         []string       `json:"weekdays"`
	QuoteMarkers     []string       `json:"quote_markers"`
	QuoteSeparators  []string       `json:"quote_separators"`
	QuoteFrom        []string       `json:"quote_from"`
	QuoteFields      []string       `json:"quote_fields"`
	Signoffs         []string       `json:"signoffs"`
	Negations        []string       `json:"negations"`
}

// lists answers the named lists of a data file, for validation.
func (l list) lists() map[string][]string {
	months := make([]string, 0, len(l.Months))
	for m := range l.Months {
		months = append(months, m)
	}
	slices.Sort(months)
	return map[string][]string{"stopwords": l.Stopwords, "positive": l.Positive, "negative": l.Negative,
		"unsubscribe": l.Unsubscribe, "question": l.Question, "neutral": l.Neutral, "ooo_subject": l.OOOSubject, "auto_reply_subject": l.AutoReplySubject, "departed": l.Departed,
		"ooo_body": l.OOOBody, "automated_subject": l.AutomatedSubject, "automated_body": l.AutomatedBody,
		"return_triggers": l.ReturnTriggers, "until_triggers": l.UntilTriggers, "months": months,
		"weekdays": l.Weekdays, "quote_markers": l.QuoteMarkers, "quote_separators": l.QuoteSeparators,
		"quote_from": l.QuoteFrom, "quote_fields": l.QuoteFields, "signoffs": l.Signoffs, "negations": l.Negations}
}

// validate says what is wrong with a data file: an empty list, an entry that is empty, not lower-case or
// repeated (after fold, so two spellings of one phrase are one), or a month number out of 1..12.
func (l list) validate() error {
	for name, entries := range l.lists() {
		if len(entries) == 0 {
			return fmt.Errorf("%s is empty", name)
		}
		seen := map[string]bool{}
		for _, e := range entries {
			if strings.TrimSpace(e) == "" {
				return fmt.Errorf("%s has an empty entry", name)
			}
			if e != strings.ToLower(e) || e != strings.TrimSpace(e) {
				return fmt.Errorf("%s entry %q is not lower-case and trimmed", name, e)
			}
			key := fold(e)
			if seen[key] {
				return fmt.Errorf("%s entry %q is repeated", name, e)
			}
			seen[key] = true
		}
	}
	for m, n := range l.Months {
		if n < 1 || n > 12 {
			return fmt.Errorf("months entry %q is %d, not 1..12", m, n)
		}
	}
	return nil
}

// readData reads the data file of each language.
func readData() (map[string]list, error) {
	out := map[string]list{}
	for _, lang := range Languages {
		raw, err := dataFS.ReadFile(path.Join("data", lang+".json"))
		if err != nil {
			return nil, err
		}
		var l list
		if err := json.Unmarshal(raw, &l); err != nil {
			return nil, fmt.Errorf("data/%s.json: %w", lang, err)
		}
		out[lang] = l
	}
	return out, nil
}
