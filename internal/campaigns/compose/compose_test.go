package compose_test

import (
	"html"
	"testing"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	dbq "github.com/outflowhq/outflow/gen/db"
	"github.com/outflowhq/outflow/internal/campaigns/campaign"
	"github.com/outflowhq/outflow/internal/campaigns/compose"
	"github.com/outflowhq/outflow/internal/campaigns/template"
	"github.com/outflowhq/outflow/internal/platform/apierror"
)

// sequence is a three-step campaign: an opener with spintax in its subject, a thread reply with no subject of
// its own, and a follow-up with its own subject that still threads.
func sequence() []campaign.Step {
	return []campaign.Step{
		{ID: uuid.New(), Position: 0, Kind: campaign.StepEmail, Subject: "{Hello|Hi|Hey|Greetings} {{.Company}}",
			BodyPlain: "Hi {{.FirstName}}, see https://example.com/pricing", BodyHTML: `<p>Hi {{.FirstName}}</p><a href="https://example.com/pricing">pricing</a>`},
		{ID: uuid.New(), Position: 1, Kind: campaign.StepEmail, ThreadReply: true, BodyPlain: "Any thoughts, {{.FirstName}}?"},
		{ID: uuid.New(), Position: 2, Kind: campaign.StepEmail, ThreadReply: true, Subject: "One more idea", BodyPlain: "{{.Signature}}"},
	}
}

func ada() compose.Contact {
	return compose.Contact{ID: uuid.New(), Contact: template.Contact{FirstName: "Ada", Email: "ada@example.com",
		Company: "Analytical Engines", Custom: map[string]string{"industry": "Computing"}}}
}

func mailbox() *dbq.Mailbox {
	return &dbq.Mailbox{Name: "Grace Hopper", Email: "grace@outflow.test", SendAsEmail: "sales@outflow.test",
		SignaturePlain: "Grace\nOutflow", SignatureHtml: "<p>Grace</p>"}
}

func TestComposeRendersTheStepForTheContactFromTheSender(t *testing.T) {
	t.Parallel()
	steps := sequence()
	c := &dbq.Campaign{Name: "Spring Launch"}
	m, err := compose.Compose(compose.Input{Campaign: c, Steps: steps, Step: &steps[2], Contact: ada(), Sender: mailbox()})
	require.NoError(t, err)
	require.Equal(t, "Grace\nOutflow", m.Plain, "the plain signature in a plain body")
	require.Equal(t, &compose.From{Name: "Grace Hopper", Email: "sales@outflow.test"}, m.From, "the send-as address")
	require.Empty(t, m.Unresolved)
	require.NoError(t, m.Sendable())
}

func TestComposeGivesAThreadReplyTheFirstSubjectRenderedWithItsOwnSeed(t *testing.T) {
	t.Parallel()
	steps := sequence()
	for range 20 {
		contact := ada()
		contact.ID = uuid.New() // different seeds pick different greetings; the reply must follow each
		opener, err := compose.Compose(compose.Input{Steps: steps, Step: &steps[0], Contact: contact})
		require.NoError(t, err)
		require.False(t, opener.ThreadReply)
		followUp, err := compose.Compose(compose.Input{Steps: steps, Step: &steps[1], Contact: contact})
		require.NoError(t, err)
		require.True(t, followUp.ThreadReply)
		require.Equal(t, "Re: "+opener.Subject, followUp.Subject)
	}
	own, err := compose.Compose(compose.Input{Steps: steps, Step: &steps[2], Contact: ada()})
	require.NoError(t, err)
	require.True(t, own.ThreadReply, "a thread reply with its own subject still threads")
	require.Equal(t, "One more idea", own.Subject)
}

func TestComposeListsTheThreadSubjectsUnresolvedVariablesFirst(t *testing.T) {
	t.Parallel()
	steps := sequence()
	contact := ada()
	contact.Company, contact.FirstName = "", ""
	m, err := compose.Compose(compose.Input{Steps: steps, Step: &steps[1], Contact: contact})
	require.NoError(t, err)
	require.Equal(t, []string{"Company", "FirstName"}, m.Unresolved)
	err = m.Sendable()
	require.Equal(t, "unresolved_variables", apierror.From(err).Code)
	require.Contains(t, apierror.From(err).Message, "Company, FirstName")
}

func TestComposeDropsTheHTMLPartOfATextOnlyCampaign(t *testing.T) {
	t.Parallel()
	step := campaign.Step{ID: uuid.New(), Kind: campaign.StepEmail, Subject: "Hi", BodyPlain: "Plain", BodyHTML: "<p>{{.Broken</p>"}
	_, err := compose.Compose(compose.Input{Step: &step, Contact: ada()})
	require.Equal(t, "invalid_template", apierror.From(err).Code, "the HTML body compiles when it is sent")

	m, err := compose.Compose(compose.Input{Campaign: &dbq.Campaign{TextOnly: true}, Step: &step, Contact: ada()})
	require.NoError(t, err)
	require.Empty(t, m.HTML)
	require.Equal(t, "Plain", m.Plain)

	step.BodyPlain = ""
	m, err = compose.Compose(compose.Input{Campaign: &dbq.Campaign{TextOnly: true}, Step: &step, Contact: ada()})
	require.NoError(t, err)
	err = m.Sendable()
	require.Equal(t, "message_incomplete", apierror.From(err).Code)
	require.Contains(t, apierror.From(err).Message, "text_only")
}

func TestComposeTagsLinksOnlyWhenTheCampaignTracksUTM(t *testing.T) {
	t.Parallel()
	steps := sequence()
	c := &dbq.Campaign{Name: "Spring Launch"}
	m, err := compose.Compose(compose.Input{Campaign: c, Steps: steps, Step: &steps[0], Contact: ada()})
	require.NoError(t, err)
	require.Contains(t, m.Plain, "https://example.com/pricing")
	require.NotContains(t, m.Plain, "utm_")

	c.UtmTracking, c.UtmSource = true, "newsletter"
	m, err = compose.Compose(compose.Input{Campaign: c, Steps: steps, Step: &steps[0], Contact: ada()})
	require.NoError(t, err)
	tagged := "https://example.com/pricing?utm_source=newsletter&utm_medium=email&utm_campaign=spring-launch&utm_content=link-1"
	require.Contains(t, m.Plain, tagged)
	require.Contains(t, m.HTML, `href="`+html.EscapeString(tagged)+`"`)
}

func TestComposeRendersGivenContentInPlaceOfTheSteps(t *testing.T) {
	t.Parallel()
	steps := sequence()
	variant := &compose.Content{Subject: "Variant B for {{.industry}}", Plain: "Short and sweet"}
	m, err := compose.Compose(compose.Input{Steps: steps, Step: &steps[0], Content: variant, Contact: ada()})
	require.NoError(t, err)
	require.Equal(t, "Variant B for Computing", m.Subject)
	require.Equal(t, "Short and sweet", m.Plain)
	require.Empty(t, m.HTML)
}

func TestComposeRefusesANonEmailStep(t *testing.T) {
	t.Parallel()
	wait := campaign.Step{ID: uuid.New(), Position: 1, Kind: campaign.StepWait}
	_, err := compose.Compose(compose.Input{Step: &wait, Contact: ada()})
	require.Equal(t, "invalid_step", apierror.From(err).Code)
	require.Contains(t, apierror.From(err).Message, "Step 2 is a wait step")
}

func TestComposeNamesAnEmptySubjectOutsideAThread(t *testing.T) {
	t.Parallel()
	m, err := compose.Compose(compose.Input{Content: &compose.Content{Plain: "Body"}, Contact: ada()})
	require.NoError(t, err)
	require.Len(t, m.Problems, 1)
	require.Contains(t, m.Problems[0], "subject is empty")
}
