package campaign

import (
	"bytes"
	"encoding/json"
	"slices"
	"strings"
)

// Condition is what a step's conditions route by: the step is sent only when the lead's engagement so far
// matches When; otherwise the lead skips it (to the next step) or stops there. The stored conditions object
// is kept verbatim; these are the keys the engine reads from it.
type Condition struct {
	// When is one of ConditionFacts ("" for a step without a condition).
	When string `json:"when"`
	// Otherwise is ConditionSkip (default) or ConditionStop.
	Otherwise string `json:"otherwise"`
}

// What a condition can test about a lead's earlier steps, and what a lead that does not match does.
var (
	ConditionFacts = []string{"opened", "not_opened", "clicked", "not_clicked", "replied", "not_replied"}
)

// Outcomes of a condition that does not match.
const (
	ConditionSkip = "skip"
	ConditionStop = "stop"
)

// ConditionError names the field of a step's conditions that breaks a rule.
type ConditionError struct {
	Field, Rule string
}

func (e *ConditionError) Error() string { return e.Field + " " + e.Rule }

// ParseCondition reads the routing condition of a step's conditions object (nil or {} has none). A when the
// engine does not know, or an otherwise other than skip or stop, is an error naming the field.
func ParseCondition(raw json.RawMessage) (Condition, error) {
	var c Condition
	if len(bytes.TrimSpace(raw)) == 0 || string(bytes.TrimSpace(raw)) == "null" {
		return c, nil
	}
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(raw, &fields); err != nil {
		return c, &ConditionError{Field: "conditions", Rule: "must be a JSON object"}
	}
	if _, ok := fields["when"]; !ok {
		return c, nil
	}
	if err := json.Unmarshal(raw, &c); err != nil {
		return c, &ConditionError{Field: "conditions.when", Rule: "and conditions.otherwise must be strings"}
	}
	if !slices.Contains(ConditionFacts, c.When) {
		return c, &ConditionError{Field: "conditions.when", Rule: "must be one of " + strings.Join(ConditionFacts, ", ")}
	}
	switch c.Otherwise {
	case "":
		c.Otherwise = ConditionSkip
	case ConditionSkip, ConditionStop:
	default:
		return c, &ConditionError{Field: "conditions.otherwise", Rule: "must be skip or stop"}
	}
	return c, nil
}

// Matches reports whether a lead with the engagement counts matches the condition (a step without one always
// does).
func (c Condition) Matches(opened, clicked, replied int32) bool {
	switch c.When {
	case "opened":
		return opened > 0
	case "not_opened":
		return opened == 0
	case "clicked":
		return clicked > 0
	case "not_clicked":
		return clicked == 0
	case "replied":
		return replied > 0
	case "not_replied":
		return replied == 0
	}
	return true
}
