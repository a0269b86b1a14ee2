package unibox

import (
	"encoding/json"
	"fmt"
	"time"
)

// Evidence is one thing that decided a verdict: kind header, report, subject, phrase, keyword or rule.
type Evidence struct {
	Kind  string `json:"kind"`
	Name  string `json:"name"`
	Value string `json:"value"`
}

// Verdict is the reply classifier's reading of an inbound message, as stored with it.
type Verdict struct {
	Intent      string
	Confidence  float64
	Evidence    []Evidence
	Unsubscribe bool
	// ReturnDate is the out-of-office return day the message states, or nil.
	ReturnDate *time.Time
}

// verdictCols are the stored verdict columns of a message (NULL throughout when a list row has none).
type verdictCols struct {
	intent      *string
	confidence  *float32
	evidence    []byte
	unsubscribe *bool
	returnDate  *time.Time
}

// verdict is nil for a message not classified (intent ”).
func (c verdictCols) verdict() (*Verdict, error) {
	if c.intent == nil || *c.intent == "" {
		return nil, nil
	}
	v := &Verdict{Intent: *c.intent, Evidence: []Evidence{}, ReturnDate: c.returnDate}
	if c.confidence != nil {
		v.Confidence = float64(*c.confidence)
	}
	if c.unsubscribe != nil {
		v.Unsubscribe = *c.unsubscribe
	}
	if len(c.evidence) > 0 {
		if err := json.Unmarshal(c.evidence, &v.Evidence); err != nil {
			return nil, fmt.Errorf("verdict evidence: %w", err)
		}
	}
	return v, nil
}
