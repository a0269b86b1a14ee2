package compose

import (
	"fmt"
	"slices"
	"strings"

	"github.com/google/uuid"

	dbq "github.com/outflowhq/outflow/gen/db"
	"github.com/outflowhq/outflow/internal/campaigns/campaign"
	"github.com/outflowhq/outflow/internal/campaigns/template"
	"github.com/outflowhq/outflow/internal/mail/sending"
	"github.com/outflowhq/outflow/internal/platform/apierror"
)

// Input is everything one message is composed from.
type Input struct {
	// Campaign gives the campaign's name, UTM tagging and text_only; nil composes loose content (a preview
	// outside any campaign).
	Campaign *dbq.Campaign
	// Steps is the campaign's sequence in order (a thread reply takes its subject from the first email step).
	Steps []campaign.Step
	// Step is the step composed (one of Steps); nil composes Content alone.
	Step *campaign.Step
	// Content, when set, replaces the step's subject and bodies: an A/B variant's content, or a preview's text.
	Content *Content
	// Contact is who the message is personalised for.
	Contact Contact
	// Sender is the mailbox the message goes out from; nil leaves the sender variables unresolved.
	Sender *dbq.Mailbox
	// App holds the values earlier app_action steps captured, by output key.
	App map[string]any
	// Tracking, when set on a campaign send, adds the open pixel (open_tracking) and tracked links
	// (link_tracking); nil composes the message as written, as previews and test sends are.
	Tracking *Tracking
	// Unsubscribe, when set on a campaign send, appends the campaign's unsubscribe line to the bodies; nil
	// appends none, as previews and test sends do.
	Unsubscribe *Unsubscribe
}

// Content is a message's source text, given in place of a step's when what is composed is not the step's own
// words (an A/B variant, a draft in the preview editor).
type Content struct {
	Subject, Plain, HTML string
}

// Contact is a recipient's fields; ID is uuid.Nil for one that is not stored (an inline preview contact, or a
// test address no contact has).
type Contact struct {
	ID uuid.UUID
	template.Contact
}

// From is who a message says it is from: the sending mailbox's name and the address the pipeline sends as, so a
// preview names the sender the recipient will see.
type From struct {
	Name, Email string
}

// Message is a composed message.
type Message struct {
	Subject, Plain, HTML string
	// Unresolved lists the variables with no value and no fallback, in order of first appearance.
	Unresolved []string
	// Problems lists what else stops the message from being sent (an empty body, a missing subject).
	Problems []string
	// ThreadReply reports that the message continues the conversation the campaign's first email step
	// started: its sender carries In-Reply-To and References of the earlier messages.
	ThreadReply bool
	// From is the sender, when Input.Sender was set.
	From *From
	// Signed reports that a body places the sender's signature itself ({{.Signature}}), so the send pipeline
	// appends none (sending.Message.Signed).
	Signed bool
}

// Sendable refuses a message that must not be enqueued: 400 unresolved_variables naming each variable with
// no value, or 400 message_incomplete naming what is missing.
func (m Message) Sendable() error {
	if err := (template.Rendered{Unresolved: m.Unresolved}).Sendable(); err != nil {
		return err
	}
	if len(m.Problems) > 0 {
		return apierror.BadRequest("message_incomplete", strings.Join(m.Problems, " ")).
			WithFix("Complete the step's content, then send again.")
	}
	return nil
}

// Compose renders in's step (or its Content) for in's contact. Only content that does not compile is an error
// (400 invalid_template); what did not resolve is listed in the Message for Sendable to refuse.
func Compose(in Input) (Message, error) {
	if in.Step != nil && in.Step.Kind != campaign.StepEmail {
		return Message{}, apierror.BadRequest("invalid_step",
			fmt.Sprintf("Step %d is a %s step; only email steps have a message.", in.Step.Position+1, in.Step.Kind))
	}
	content := in.content()
	textOnly := in.Campaign != nil && in.Campaign.TextOnly
	if textOnly {
		content.HTML = ""
	}
	parsed, err := template.ParseMessage(content.Subject, content.Plain, content.HTML)
	if err != nil {
		return Message{}, err
	}
	data := in.data()
	var step uuid.UUID
	if in.Step != nil {
		step = in.Step.ID
	}
	r := parsed.Render(&data, in.options(step))
	out := Message{Subject: r.Subject, Plain: r.Plain, HTML: r.HTML, Unresolved: r.Unresolved, Signed: parsed.PlacesSignature()}
	out.Plain, out.HTML = in.unsubscribeLine(out.Plain, out.HTML)
	if out.HTML, err = in.pixel(out.HTML); err != nil {
		return Message{}, err
	}
	if in.Sender != nil {
		out.From = &From{Name: in.Sender.Name, Email: sending.FromAddress(*in.Sender)}
	}
	if first := in.threadStart(); first != nil && in.Step.ThreadReply {
		out.ThreadReply = true
		if own := strings.TrimSpace(content.Subject); own == "" || own == strings.TrimSpace(first.Subject) {
			subject, err := template.ParseMessage(first.Subject, "", "")
			if err != nil {
				return Message{}, err
			}
			thread := subject.Render(&data, in.options(first.ID))
			out.Subject = reply(thread.Subject)
			out.Unresolved = union(thread.Unresolved, out.Unresolved)
		}
	}
	if strings.TrimSpace(out.Subject) == "" {
		out.Problems = append(out.Problems, "The subject is empty: give the step a subject (only a thread reply takes its conversation's).")
	}
	if strings.TrimSpace(out.Plain) == "" && strings.TrimSpace(out.HTML) == "" {
		if textOnly {
			out.Problems = append(out.Problems, "The message has no body: the campaign is text_only, which sends no HTML part, and body_plain is empty.")
		} else {
			out.Problems = append(out.Problems, "The message has no body: write body_plain, body_html or both.")
		}
	}
	return out, nil
}

// content is the source text composed: Content when set, else the step's.
func (in Input) content() Content {
	switch {
	case in.Content != nil:
		return *in.Content
	case in.Step != nil:
		return Content{Subject: in.Step.Subject, Plain: in.Step.BodyPlain, HTML: in.Step.BodyHTML}
	}
	return Content{}
}

// data is the template data of in.
func (in Input) data() template.Data {
	d := template.Data{Contact: in.Contact.Contact, App: in.App}
	if m := in.Sender; m != nil {
		d.Sender = template.Sender{Name: m.Name, Email: sending.FromAddress(*m), SignatureHTML: m.SignatureHtml,
			SignaturePlain: m.SignaturePlain}
	}
	if c := in.Campaign; c != nil {
		d.Campaign.Name = c.Name
	}
	return d
}

// options are the render options of one step of in: its spintax seed, UTM when the campaign tags links, and
// the click rewriter when a tracked send has link_tracking on.
func (in Input) options(step uuid.UUID) template.Options {
	o := template.Options{Seed: template.Seed(in.Contact.ID, step), Links: in.clickLinks()}
	if c := in.Campaign; c != nil && c.UtmTracking {
		o.UTM = template.NewUTM(c.UtmSource, c.UtmMedium, c.UtmCampaign, c.Name)
	}
	return o
}

// threadStart is the email step that started the conversation in.Step continues: the first email step before
// it (nil when there is none, or no step).
func (in Input) threadStart() *campaign.Step {
	if in.Step == nil {
		return nil
	}
	for i := range in.Steps {
		s := &in.Steps[i]
		if s.Position >= in.Step.Position {
			return nil
		}
		if s.Kind == campaign.StepEmail {
			return s
		}
	}
	return nil
}

// reply is a reply's subject: "Re: " and the conversation's, which keeps a "Re:" it already has.
func reply(subject string) string {
	if len(subject) >= 3 && strings.EqualFold(subject[:3], "re:") {
		return subject
	}
	return "Re: " + subject
}

// union is a followed by the names of b it lacks, in order.
func union(a, b []string) []string {
	out := append([]string(nil), a...)
	for _, name := range b {
		if !slices.Contains(out, name) {
			out = append(out, name)
		}
	}
	return out
}
