package campaign

import (
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/google/uuid"
)

// Limits of a step.
const (
	MaxSteps          = 50
	MaxSubject        = 998
	MaxBodyPlain      = 100000
	MaxBodyHTML       = 200000
	MaxWaitAfterDays  = 365
	MaxConditionBytes = 16384
	MaxActionBytes    = 16384
	MaxWaitMinutes    = 129600
	MaxEventTimeout   = 43200
	// DefaultFollowUpDays is a follow-up's wait_after when none is given.
	DefaultFollowUpDays = 3
)

// Step kinds and the action types of non-email steps.
const (
	StepEmail  = "email"
	StepAction = "action"
	StepWait   = "wait"

	ActionApp      = "app_action"
	ActionForEvent = "wait_for_event"
	ActionWait     = "wait"
)

// StepInput is a step as a create or an update sends it.
type StepInput struct {
	Name, Subject, BodyPlain, BodyHTML Field[string]
	BodySync, BodyCode                 Field[bool]
	WaitAfter                          Field[int32]
	ThreadReply                        Field[bool]
	Kind                               Field[string]
	// Conditions and Action are JSON objects as sent (nil when absent).
	Conditions, Action Field[json.RawMessage]
	OnTimeout          Field[string]
	// Position is where one added step goes, or where an updated one moves to; in a whole sequence (create)
	// each step's position is its place in the list.
	Position Field[int32]
}

// Step is a step's stored form.
type Step struct {
	ID                                 uuid.UUID
	Position                           int32
	Name, Subject, BodyPlain, BodyHTML string
	BodySync, BodyCode                 bool
	WaitAfter                          int32
	ThreadReply                        bool
	Kind                               string
	Conditions, Action                 json.RawMessage
	OnTimeout                          string
	CreatedAt, UpdatedAt               time.Time
}

// ActionType is the type of a non-email step's action ("" for email steps).
func (s Step) ActionType() string {
	if s.Kind == StepWait {
		return ActionWait
	}
	var a struct {
		Type string `json:"type"`
	}
	_ = json.Unmarshal(s.Action, &a)
	return a.Type
}

// What an app_action step does when its call fails (action.on_error).
const (
	// OnErrorStop ends the lead's sequence there (failed, app_action_failed); the default.
	OnErrorStop = "stop"
	// OnErrorContinue goes on to the next step with nothing captured.
	OnErrorContinue = "continue"
	// OnErrorBlock keeps the lead at the step, its run blocked, until POST
	// /campaigns/{id}/step-runs/{runId}/retry runs it again.
	OnErrorBlock = "block"
)

// AppAction is an app_action step's config: the connection called, the path under its base URL, the key its
// answer is captured under (.App.<output_key>), the inputs sent (string values are templates) and what a
// failed call does.
type AppAction struct {
	ConnectionID uuid.UUID       `json:"app_connection_id"`
	Path         string          `json:"path"`
	OutputKey    string          `json:"output_key"`
	Inputs       json.RawMessage `json:"inputs"`
	OnError      string          `json:"on_error"`
}

// AppAction decodes an app_action step's config (checked when the step was written), on_error defaulting to
// stop.
func (s Step) AppAction() AppAction {
	var a AppAction
	_ = json.Unmarshal(s.Action, &a)
	if a.OnError == "" {
		a.OnError = OnErrorStop
	}
	return a
}

// threadSubject is the subject a conversation carries at a step: the last email step before it with one.
func threadSubject(steps []Step, before int) string {
	for i := before - 1; i >= 0; i-- {
		if steps[i].Kind == StepEmail && strings.TrimSpace(steps[i].Subject) != "" {
			return steps[i].Subject
		}
	}
	return ""
}

// BuildStep applies in to base (a new step when base is the zero Step) at position pos among steps (the
// sequence before it), with the defaults of part 3: the first step waits 0 days, email follow-ups 3 and other steps 0 (their own config says how long they take); a step
// with no subject or the thread's own defaults to thread_reply true, one with its own subject to false.
func BuildStep(base Step, in StepInput, pos int, steps []Step) (Step, error) {
	s := base
	isNew := s.ID == uuid.Nil
	if isNew {
		s.Kind, s.BodySync, s.OnTimeout = StepEmail, true, "continue"
		s.WaitAfter = DefaultFollowUpDays
		// The first step waits nothing; a non-email step's own config says how long it takes (a wait step's
		// wait_minutes), so it adds no days of its own unless told to.
		if pos == 0 || in.Kind.Set && in.Kind.Value != StepEmail {
			s.WaitAfter = 0
		}
	}
	in.Name.apply(&s.Name)
	in.Subject.apply(&s.Subject)
	in.BodyPlain.apply(&s.BodyPlain)
	in.BodyHTML.apply(&s.BodyHTML)
	in.BodySync.apply(&s.BodySync)
	in.BodyCode.apply(&s.BodyCode)
	in.WaitAfter.apply(&s.WaitAfter)
	in.Kind.apply(&s.Kind)
	in.OnTimeout.apply(&s.OnTimeout)
	if in.Conditions.Set {
		s.Conditions = nullIfEmpty(in.Conditions.Value)
	}
	if in.Action.Set {
		s.Action = nullIfEmpty(in.Action.Value)
	}
	s.Position = int32(pos)
	s.Name = strings.TrimSpace(s.Name)
	if utf8.RuneCountInString(s.Name) > 255 || strings.ContainsFunc(s.Name, unicode.IsControl) {
		return s, stepInvalid(pos, "name", "must be at most 255 characters on one line.")
	}
	if strings.ContainsAny(s.Subject, "\r\n") || utf8.RuneCountInString(s.Subject) > MaxSubject {
		return s, stepInvalid(pos, "subject", fmt.Sprintf("must be one line of at most %d characters.", MaxSubject))
	}
	if utf8.RuneCountInString(s.BodyPlain) > MaxBodyPlain {
		return s, stepInvalid(pos, "body_plain", fmt.Sprintf("must be at most %d characters.", MaxBodyPlain))
	}
	if utf8.RuneCountInString(s.BodyHTML) > MaxBodyHTML {
		return s, stepInvalid(pos, "body_html", fmt.Sprintf("must be at most %d characters.", MaxBodyHTML))
	}
	if s.WaitAfter < 0 || s.WaitAfter > MaxWaitAfterDays {
		return s, stepInvalid(pos, "wait_after", fmt.Sprintf("must be 0 to %d days.", MaxWaitAfterDays))
	}
	if s.OnTimeout != "continue" && s.OnTimeout != "stop" {
		return s, stepInvalid(pos, "on_timeout", "must be continue or stop.")
	}
	if len(s.Conditions) > MaxConditionBytes {
		return s, stepInvalid(pos, "conditions", fmt.Sprintf("must be a JSON object of at most %d bytes.", MaxConditionBytes))
	}
	var bad *ConditionError
	if _, err := ParseCondition(s.Conditions); errors.As(err, &bad) {
		return s, stepInvalid(pos, bad.Field, bad.Rule+".")
	}
	if err := stepAction(&s, pos); err != nil {
		return s, err
	}
	switch {
	case in.ThreadReply.Set:
		s.ThreadReply = in.ThreadReply.Value
	case isNew || in.Subject.Set:
		subject := strings.TrimSpace(s.Subject)
		s.ThreadReply = pos > 0 && (subject == "" || subject == strings.TrimSpace(threadSubject(steps, pos)))
	}
	if s.Kind != StepEmail {
		s.ThreadReply = false
	}
	return s, nil
}

func nullIfEmpty(raw json.RawMessage) json.RawMessage {
	if len(raw) == 0 || string(raw) == "null" {
		return nil
	}
	return raw
}

func stepInvalid(pos int, field, rule string) error {
	return invalid("step", fmt.Sprintf("%d: %s %s", pos+1, field, rule))
}

var outputKey = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9_]{0,63}$`)

// stepAction checks a step's kind against its action config: email steps carry none; wait steps
// {wait_minutes}; action steps an app_action {app_connection_id, path, output_key, inputs} or a
// wait_for_event {wait_event_name, timeout_minutes}. An app_action's connection must be the organization's, which
// needs the database: KeepConnections checks it where steps are written.
func stepAction(s *Step, pos int) error {
	switch s.Kind {
	case StepEmail:
		if s.Action != nil {
			return stepInvalid(pos, "action", "is only for action and wait steps.")
		}
		return nil
	case StepWait, StepAction:
	default:
		return stepInvalid(pos, "kind", "must be email, action or wait.")
	}
	if len(s.Action) > MaxActionBytes {
		return stepInvalid(pos, "action", fmt.Sprintf("must be a JSON object of at most %d bytes.", MaxActionBytes))
	}
	var a struct {
		Type            string          `json:"type"`
		WaitMinutes     *int64          `json:"wait_minutes"`
		AppConnectionID string          `json:"app_connection_id"`
		Path            string          `json:"path"`
		OutputKey       string          `json:"output_key"`
		Inputs          json.RawMessage `json:"inputs"`
		OnError         string          `json:"on_error"`
		WaitEventName   string          `json:"wait_event_name"`
		TimeoutMinutes  *int64          `json:"timeout_minutes"`
	}
	if s.Action == nil || json.Unmarshal(s.Action, &a) != nil {
		return stepInvalid(pos, "action", "must be a JSON object with the step's config.")
	}
	if s.Kind == StepWait {
		if a.Type != "" && a.Type != ActionWait {
			return stepInvalid(pos, "action.type", "must be wait (or absent) for a wait step.")
		}
		if a.WaitMinutes == nil || *a.WaitMinutes < 1 || *a.WaitMinutes > MaxWaitMinutes {
			return stepInvalid(pos, "action.wait_minutes", fmt.Sprintf("must be 1 to %d minutes.", MaxWaitMinutes))
		}
		return nil
	}
	switch a.Type {
	case ActionApp:
		if _, err := uuid.Parse(a.AppConnectionID); err != nil {
			return stepInvalid(pos, "action.app_connection_id", "must be the id of an app connection.")
		}
		if !strings.HasPrefix(a.Path, "/") || len(a.Path) > 500 || strings.ContainsFunc(a.Path, unicode.IsSpace) {
			return stepInvalid(pos, "action.path", "must be a path starting with / (at most 500 characters, no spaces).")
		}
		if !outputKey.MatchString(a.OutputKey) {
			return stepInvalid(pos, "action.output_key", "must start with a letter and use letters, digits and _ (at most 64).")
		}
		if len(a.Inputs) > 0 && string(a.Inputs) != "null" && a.Inputs[0] != '{' {
			return stepInvalid(pos, "action.inputs", "must be a JSON object.")
		}
		switch a.OnError {
		case "", OnErrorStop, OnErrorContinue, OnErrorBlock:
		default:
			return stepInvalid(pos, "action.on_error", "must be stop (the default), continue or block.")
		}
	case ActionForEvent:
		if n := utf8.RuneCountInString(strings.TrimSpace(a.WaitEventName)); n == 0 || n > 100 {
			return stepInvalid(pos, "action.wait_event_name", "must be 1 to 100 characters.")
		}
		if a.TimeoutMinutes != nil && (*a.TimeoutMinutes < 0 || *a.TimeoutMinutes > MaxEventTimeout) {
			return stepInvalid(pos, "action.timeout_minutes", fmt.Sprintf("must be 1 to %d minutes (omitted or 0: %d).", MaxEventTimeout, MaxEventTimeout))
		}
	default:
		return stepInvalid(pos, "action.type", "must be app_action or wait_for_event for an action step.")
	}
	return nil
}

// BuildSteps builds a whole sequence from inputs in order, each connected to the next.
func BuildSteps(ins []StepInput, kind string) ([]Step, error) {
	if len(ins) > MaxSteps {
		return nil, invalid("steps", fmt.Sprintf("takes at most %d steps.", MaxSteps))
	}
	steps := make([]Step, 0, len(ins))
	for i, in := range ins {
		if in.Position.Set && in.Position.Value != int32(i) {
			return nil, invalid("steps", fmt.Sprintf("%d: position must be omitted or %d, its place in steps.", i+1, i))
		}
		s, err := BuildStep(Step{}, in, i, steps)
		if err != nil {
			return nil, err
		}
		if s.ID, err = uuid.NewV7(); err != nil {
			return nil, err
		}
		steps = append(steps, s)
	}
	return steps, CheckKind(kind, steps)
}

// CheckKind enforces that a one_time campaign holds at most one email step.
func CheckKind(kind string, steps []Step) error {
	if kind != KindOneTime {
		return nil
	}
	n := 0
	for _, s := range steps {
		if s.Kind == StepEmail {
			n++
		}
	}
	if n > 1 {
		return invalid("steps", "of a one_time campaign may hold at most one email step.")
	}
	return nil
}
