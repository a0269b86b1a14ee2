package checks

import (
	"fmt"
	"slices"
	"strings"

	"github.com/google/uuid"

	"github.com/outflowhq/outflow/internal/campaigns/campaign"
	"github.com/outflowhq/outflow/internal/campaigns/template"
	"github.com/outflowhq/outflow/internal/platform/apierror"
)

// partNames are the API names of a message's parts, in template.Message order.
var partNames = [3]string{"subject", "body_plain", "body_html"}

// message is one email a contact may receive: an email step's own content, or an active A/B variant's with
// the parts it leaves empty taken from its step.
type message struct {
	// label names it in a sentence: "step 2", `variant "B" of step 2`, `campaign-wide variant "B"`.
	label string
	// step is the step it is sent at (the first email step for a campaign-wide variant): App values must be
	// captured before it.
	step   campaign.Step
	stepID uuid.NullUUID
	// parts are subject, plain and HTML bodies as sent; own says which were written for this message (a
	// variant's others are its step's, checked with the step).
	parts     [3]string
	own       [3]bool
	templates [3]*template.Template
	problems  []Problem
	score     int
	penalties []Penalty
}

// analysis is a snapshot with what several checks share worked out once: the messages, parsed and scored.
type analysis struct {
	s        Snapshot
	messages []*message
	// score is the content score of the campaign: the lowest of its messages' (0 when it has none), and
	// lowest is that message.
	score  int
	lowest *message
}

// analyse builds the messages of s (each email step's, then each active non-control variant's), parsed,
// checked and scored, and finds the lowest score.
func analyse(s Snapshot) *analysis {
	a := &analysis{s: s}
	emails := emailSteps(s.Steps)
	for _, st := range emails {
		a.add(&message{label: stepLabel(st), step: st, stepID: stepID(st),
			parts: [3]string{st.Subject, st.BodyPlain, st.BodyHTML}, own: [3]bool{true, true, true}})
	}
	for _, v := range s.Variants {
		if v.IsControl || !v.IsActive || len(emails) == 0 {
			continue
		}
		m := &message{label: fmt.Sprintf("campaign-wide variant %q", v.Name), step: emails[0]}
		if v.StepID.Valid {
			i := slices.IndexFunc(emails, func(st campaign.Step) bool { return st.ID == v.StepID.UUID })
			if i < 0 {
				continue
			}
			m.label, m.step, m.stepID = fmt.Sprintf("variant %q of %s", v.Name, stepLabel(emails[i])), emails[i], stepID(emails[i])
		}
		base := [3]string{m.step.Subject, m.step.BodyPlain, m.step.BodyHTML}
		for i, own := range [3]string{v.Subject, v.BodyPlain, v.BodyHTML} {
			m.parts[i], m.own[i] = base[i], false
			if strings.TrimSpace(own) != "" {
				m.parts[i], m.own[i] = own, true
			}
		}
		a.add(m)
	}
	for _, m := range a.messages {
		if a.lowest == nil || m.score < a.lowest.score {
			a.lowest = m
		}
	}
	if a.lowest != nil {
		a.score = a.lowest.score
	}
	return a
}

// add parses m's parts, records its template problems and scores it.
func (a *analysis) add(m *message) {
	for i, src := range m.parts {
		if src == "" {
			continue
		}
		t, err := template.Parse(src)
		if err != nil {
			if m.own[i] {
				m.problems = append(m.problems, Problem{Code: CodeTemplateError, Severity: SeverityError, StepID: m.stepID,
					Message: fmt.Sprintf("%s %s does not parse: %s.", upper(m.label), partNames[i], apierror.From(err).Message),
					Fix:     `Correct the template at the position named: variables are written {{.FirstName}}, with an optional fallback {{.FirstName | default "there"}}, and spintax {Hi|Hello}.`})
			}
			continue
		}
		m.templates[i] = t
	}
	m.problems = append(m.problems, a.unresolved(m)...)
	m.score, m.penalties = scoreMessage(m, a.s.Campaign)
	a.messages = append(a.messages, m)
}

// unresolved lists the variables of m's own parts that no contact or earlier step can fill and that have no
// fallback, once per variable name with the parts using it.
func (a *analysis) unresolved(m *message) []Problem {
	var names []string
	where := map[string][]string{}
	why := map[string][2]string{}
	for i, t := range m.templates {
		if t == nil || !m.own[i] {
			continue
		}
		for _, v := range t.Variables() {
			if v.HasFallback {
				continue
			}
			msg, fix := a.resolve(m, v)
			if msg == "" {
				continue
			}
			if _, seen := where[v.Name]; !seen {
				names = append(names, v.Name)
				why[v.Name] = [2]string{msg, fix}
			}
			if !slices.Contains(where[v.Name], partNames[i]) {
				where[v.Name] = append(where[v.Name], partNames[i])
			}
		}
	}
	out := make([]Problem, 0, len(names))
	for _, name := range names {
		out = append(out, Problem{Code: CodeUnresolvedVariable, Severity: SeverityError, StepID: m.stepID,
			Message: fmt.Sprintf("%s uses {{.%s}} in %s, but %s, and it has no fallback; a message with an unresolved variable is never sent.",
				upper(m.label), name, strings.Join(where[name], " and "), why[name][0]),
			Fix: why[name][1]})
	}
	return out
}

// resolve says why v cannot resolve at m ("" when it can) and how to fix it. Standard, sender and campaign
// fields always have a source; a custom field needs a key some contact carries; an App value needs an
// app_action step before m's step that captures its output key.
func (a *analysis) resolve(m *message, v template.Variable) (why, fix string) {
	fallback := fmt.Sprintf(`add a fallback ({{.%s | default "..."}})`, v.Name)
	switch v.Kind {
	case template.VariableCustom:
		if slices.ContainsFunc(a.s.CustomFieldKeys, v.Matches) {
			return "", ""
		}
		return fmt.Sprintf("no contact of this organization has a custom field %q", v.Key),
			upper(fallback) + fmt.Sprintf(", or set the custom field %q on the contacts.", v.Key)
	case template.VariableApp:
		var later *campaign.Step
		for i := range a.s.Steps {
			st := &a.s.Steps[i]
			if key := outputKey(*st); key != "" && v.Matches(key) {
				if st.Position < m.step.Position {
					return "", ""
				}
				if later == nil {
					later = st
				}
			}
		}
		if later != nil {
			return fmt.Sprintf("the app_action step capturing %q is %s, which runs after it", v.Key, stepLabel(*later)),
				fmt.Sprintf("Move %s before %s, or %s.", stepLabel(*later), stepLabel(m.step), fallback)
		}
		return fmt.Sprintf("no app_action step before it has output_key %q", v.Key),
			fmt.Sprintf("Add an app_action step with output_key %q before %s, or %s.", v.Key, stepLabel(m.step), fallback)
	}
	return "", ""
}

// needsCustomKeys reports whether a subject or body of s names a custom field without a fallback, the only
// case in which the checks need the organization's custom-field keys (Load asks for them only then).
func needsCustomKeys(s Snapshot) bool {
	var srcs []string
	for _, st := range emailSteps(s.Steps) {
		srcs = append(srcs, st.Subject, st.BodyPlain, st.BodyHTML)
	}
	for _, v := range s.Variants {
		srcs = append(srcs, v.Subject, v.BodyPlain, v.BodyHTML)
	}
	for _, src := range srcs {
		t, err := template.Parse(src)
		if err == nil && slices.ContainsFunc(t.Variables(), func(v template.Variable) bool {
			return v.Kind == template.VariableCustom && !v.HasFallback
		}) {
			return true
		}
	}
	return false
}
