package handlers_test

import (
	"context"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/emersion/go-message/mail"
	"github.com/go-faster/jx"
	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/outflowhq/outflow/gen/api"
	"github.com/outflowhq/outflow/handlers/apitest"
	"github.com/outflowhq/outflow/internal/identity/auth"
	"github.com/outflowhq/outflow/internal/testkit/mailtest"
)

// sendRig is an organization whose one mailbox (Ada Lovelace, with signatures and no gap) reaches in-process
// SMTP and IMAP servers, a contact to personalise for, and a campaign to test.
type sendRig struct {
	*mailRig
	box     *api.Mailbox
	contact api.Contact
	camp    *api.Campaign
	// steps are the campaign's step ids in order.
	steps []uuid.UUID
}

// The campaign's content: a spintax opener with a fallback in HTML only, a thread reply with no subject, and a
// follow-up with its own subject.
const (
	openerSubject = "{Hi|Hello|Hey} {{.FirstName}}"
	openerPlain   = "We help {{.industry}} teams like {{.Company}}: https://example.com/demo\n-- \n{{.Signature}}"
	openerHTML    = `<p>{Hi|Hello|Hey} {{.FirstName | default "there"}},</p><p><a href="https://example.com/demo">Demo</a></p>{{.Signature}}`
	demoTagged    = "https://example.com/demo?utm_source=outflow&utm_medium=email&utm_campaign=spring-launch&utm_content=link-1"
)

func newSendRig(t *testing.T, steps []api.CampaignStepCreate, opts ...apitest.Option) *sendRig {
	t.Helper()
	ctx := context.Background()
	r := &sendRig{mailRig: newMailRig(t, opts...)}
	req := r.connectReq(t, rigUser)
	req.MinWaitTime = api.NewOptInt(0)
	box, err := r.c.MailboxesCreate(ctx, req, api.MailboxesCreateParams{})
	require.NoError(t, err)
	r.box, err = r.c.MailboxesUpdate(ctx, &api.MailboxUpdate{SignaturePlain: api.NewOptString("Ada\nOutflow"),
		SignatureHTML: api.NewOptString("<p>Ada &amp; team</p>")}, api.MailboxesUpdateParams{ID: box.ID})
	require.NoError(t, err)
	r.contact = createContacts(t, r.c, api.ContactCreate{Email: "charles@example.org", FirstName: api.NewOptString("Charles"),
		Company:      api.NewOptString("Difference Engines"),
		CustomFields: api.NewOptContactCreateCustomFields(api.ContactCreateCustomFields{"industry": "Computing"})})[0]
	if steps == nil {
		steps = []api.CampaignStepCreate{
			{Name: api.NewOptString("Opener"), Subject: api.NewOptString(openerSubject), BodyPlain: api.NewOptString(openerPlain),
				BodyHTML: api.NewOptString(openerHTML)},
			{Name: api.NewOptString("Bump"), BodyPlain: api.NewOptString("Any thoughts, {{.FirstName}}?")},
			{Name: api.NewOptString("Breakup"), Subject: api.NewOptString("Closing the loop"), ThreadReply: api.NewOptBool(true),
				BodyPlain: api.NewOptString("Last note from {{.Sender.FirstName}}.")},
		}
	}
	r.camp = campCreate(t, r.c, api.CampaignCreate{Name: "Spring Launch", UtmTracking: api.NewOptBool(true), Steps: steps})
	r.steps = stepIDs(t, r.env, r.org, r.camp.ID)
	return r
}

// file stores a campaign attachment (the attachments endpoints arrive separately), for one step or, with
// uuid.Nil, for every step; age orders files by when they were added.
func (r *sendRig) file(t *testing.T, name string, step uuid.UUID, age time.Duration) uuid.UUID {
	t.Helper()
	id, body := uuid.New(), []byte("%PDF-1.4 "+name)
	stepID := uuid.NullUUID{UUID: step, Valid: step != uuid.Nil}
	orgExec(t, r.env, r.org, `INSERT INTO campaign_attachments (organization_id, campaign_id, id, step_id, filename, mime_type,
		size, sha256, content, created_at) VALUES ($1, $2, $3, $4, $5, 'application/pdf', $6, sha256($7), $7, now() - $8::interval)`,
		r.org, r.camp.ID, id, stepID, name, len(body), body, age.String())
	return id
}

func (r *sendRig) preview(t *testing.T, req api.TemplatePreviewRequest) *api.TemplatePreview {
	t.Helper()
	out, err := r.c.CampaignsTemplatePreview(context.Background(), &req)
	require.NoError(t, err)
	return out
}

func TestTemplatePreviewRendersAStepForAStoredContact(t *testing.T) {
	t.Parallel()
	r := newSendRig(t, nil)
	shared := r.file(t, "pricing.pdf", uuid.Nil, 2*time.Minute)
	own := r.file(t, "deck.pdf", r.steps[0], time.Minute)
	r.file(t, "case-study.pdf", r.steps[1], 0)

	req := api.TemplatePreviewRequest{CampaignID: api.NewOptUUID(r.camp.ID), StepID: api.NewOptUUID(r.steps[0]),
		ContactID: api.NewOptUUID(r.contact.ID)}
	p := r.preview(t, req)
	greeting := strings.TrimSuffix(p.Subject.Value, " Charles")
	require.Contains(t, []string{"Hi", "Hello", "Hey"}, greeting, p.Subject.Value)
	require.Equal(t, "We help Computing teams like Difference Engines: "+demoTagged+"\n-- \nAda\nOutflow", p.BodyPlain.Value,
		"custom fields, standard fields, UTM tagging and the plain signature")
	require.Contains(t, p.BodyHTML.Value, `<a href="`+strings.ReplaceAll(demoTagged, "&", "&amp;")+`">Demo</a>`)
	require.True(t, strings.HasSuffix(p.BodyHTML.Value, "<p>Ada &amp; team</p>"), "the HTML signature as stored")
	require.Empty(t, p.Unresolved)
	require.Empty(t, p.Errors)
	require.Equal(t, "Ada Lovelace", p.From.Value.Name.Value)
	require.Equal(t, rigUser, p.From.Value.Email.Value)
	var files []uuid.UUID
	for _, f := range p.Attachments {
		files = append(files, f.ID.Value)
	}
	require.Equal(t, []uuid.UUID{shared, own}, files, "the campaign's files and the step's, not another step's")
	require.Equal(t, "deck.pdf", p.Attachments[1].Filename.Value)
	require.Equal(t, "application/pdf", p.Attachments[1].MimeType.Value)

	// Spintax is a function of the contact and the step: previewing again picks the same words, and the
	// thread reply's subject follows the opener's.
	require.Equal(t, p, r.preview(t, req))
	req.StepID = api.NewOptUUID(r.steps[1])
	reply := r.preview(t, req)
	require.Equal(t, "Re: "+p.Subject.Value, reply.Subject.Value)
	require.Equal(t, "Any thoughts, Charles?", reply.BodyPlain.Value)
}

func TestTemplatePreviewListsUnresolvedVariablesAndAppliesFallbacks(t *testing.T) {
	t.Parallel()
	r := newSendRig(t, nil)
	p := r.preview(t, api.TemplatePreviewRequest{CampaignID: api.NewOptUUID(r.camp.ID), StepID: api.NewOptUUID(r.steps[0]),
		Contact: api.NewOptTemplatePreviewRequestContact(api.TemplatePreviewRequestContact{Email: api.NewOptString("x@example.net"),
			Company: api.NewOptString("Initech")})})
	require.Equal(t, []string{"FirstName", "industry"}, p.Unresolved, "subject first, then the plain body; the HTML body has a fallback")
	require.True(t, strings.HasPrefix(p.BodyHTML.Value, "<p>Hi there,</p>") || strings.HasPrefix(p.BodyHTML.Value, "<p>Hello there,</p>") ||
		strings.HasPrefix(p.BodyHTML.Value, "<p>Hey there,</p>"), p.BodyHTML.Value)
	require.Contains(t, p.BodyPlain.Value, "teams like Initech")

	// Inline content with inline custom fields, outside any campaign: no UTM tagging, the org's mailbox signs.
	p = r.preview(t, api.TemplatePreviewRequest{Subject: api.NewOptString("For {{.Custom.Industry | default \"you\"}}"),
		BodyPlain: api.NewOptString("https://example.com/x {{.Sender.Name}}"),
		Contact: api.NewOptTemplatePreviewRequestContact(api.TemplatePreviewRequestContact{
			CustomFields: api.NewOptTemplatePreviewRequestContactCustomFields(api.TemplatePreviewRequestContactCustomFields{"industry": "Retail"})})})
	require.Equal(t, "For Retail", p.Subject.Value, "custom keys match case-insensitively")
	require.Equal(t, "https://example.com/x Ada Lovelace", p.BodyPlain.Value)
	require.Empty(t, p.Unresolved)

	// What would still stop a send is listed.
	p = r.preview(t, api.TemplatePreviewRequest{Subject: api.NewOptString("Only a subject")})
	require.Len(t, p.Errors, 1)
	require.Contains(t, p.Errors[0], "no body")
}

func TestTemplatePreviewRefusesContentThatDoesNotCompileAndUnknownIDs(t *testing.T) {
	t.Parallel()
	r := newSendRig(t, nil)
	ctx := context.Background()
	_, err := r.c.CampaignsTemplatePreview(ctx, &api.TemplatePreviewRequest{Subject: api.NewOptString("Hi"),
		BodyHTML: api.NewOptString("<p>\n{{.FirstName</p>")})
	requireAPIError(t, err, 400, "invalid_template")
	var se *api.ErrorStatusCode
	require.ErrorAs(t, err, &se)
	require.Contains(t, se.Response.Message, "body_html")
	require.Contains(t, se.Response.Message, "line 2 column 1")

	other := r.env.Bootstrap(t, "other")
	foreign := createContacts(t, r.env.Client(t, other.APIKey), api.ContactCreate{Email: "eve@example.org"})[0]
	for _, tc := range []struct {
		req  api.TemplatePreviewRequest
		code string
	}{
		{api.TemplatePreviewRequest{ContactID: api.NewOptUUID(foreign.ID)}, "contact_not_found"},
		{api.TemplatePreviewRequest{CampaignID: api.NewOptUUID(uuid.New())}, "campaign_not_found"},
		{api.TemplatePreviewRequest{CampaignID: api.NewOptUUID(r.camp.ID), StepID: api.NewOptUUID(uuid.New())}, "step_not_found"},
		{api.TemplatePreviewRequest{AccountID: api.NewOptUUID(uuid.New())}, "mailbox_not_found"},
	} {
		_, err := r.c.CampaignsTemplatePreview(ctx, &tc.req)
		requireAPIError(t, err, 404, tc.code)
	}
	_, err = r.c.CampaignsTemplatePreview(ctx, &api.TemplatePreviewRequest{StepID: api.NewOptUUID(r.steps[0])})
	requireAPIError(t, err, 400, "invalid_step_id")

	// A key limited to other mailboxes cannot preview as this one.
	scoped := r.env.Client(t, scopedKey(t, r.env, r.org, auth.ReadCampaigns, uuid.New()))
	_, err = scoped.CampaignsTemplatePreview(ctx, &api.TemplatePreviewRequest{AccountID: api.NewOptUUID(r.box.ID)})
	requireAPIError(t, err, 404, "mailbox_not_found")
}

// received parses a message the SMTP server got: its headers, bodies and attached file names.
type received struct {
	header          mail.Header
	plain, html     string
	files           []string
	to, from, msgID string
}

func parseReceived(t *testing.T, m mailtest.Received) received {
	t.Helper()
	mr, err := mail.CreateReader(strings.NewReader(string(m.Data)))
	require.NoError(t, err)
	out := received{header: mr.Header, to: m.To[0], from: m.From}
	out.msgID, err = mr.Header.MessageID()
	require.NoError(t, err)
	for {
		p, err := mr.NextPart()
		if err == io.EOF {
			break
		}
		require.NoError(t, err)
		raw, err := io.ReadAll(p.Body)
		require.NoError(t, err)
		switch h := p.Header.(type) {
		case *mail.InlineHeader:
			if ct, _, _ := h.ContentType(); ct == "text/html" {
				out.html = string(raw)
			} else {
				out.plain = string(raw)
			}
		case *mail.AttachmentHeader:
			name, err := h.Filename()
			require.NoError(t, err)
			out.files = append(out.files, name)
		}
	}
	return out
}

func (r *sendRig) testEmail(t *testing.T, req api.CampaignTestEmailRequest) (*api.CampaignTestEmailResult, error) {
	t.Helper()
	return r.c.CampaignsSendTestEmail(context.Background(), &req, api.CampaignsSendTestEmailParams{ID: r.camp.ID})
}

func TestTestEmailArrivesRenderedWithTheStepsFiles(t *testing.T) {
	t.Parallel()
	r := newSendRig(t, nil)
	r.file(t, "pricing.pdf", uuid.Nil, time.Minute)
	r.file(t, "deck.pdf", r.steps[0], 0)
	// The mailbox appends its signature to what it sends, unless the template placed it already.
	_, err := r.c.MailboxesUpdate(context.Background(), &api.MailboxUpdate{SignatureSync: api.NewOptBool(true)}, api.MailboxesUpdateParams{ID: r.box.ID})
	require.NoError(t, err)
	r.env.StartWorkers(t)
	preview := r.preview(t, api.TemplatePreviewRequest{CampaignID: api.NewOptUUID(r.camp.ID), StepID: api.NewOptUUID(r.steps[0]),
		ContactID: api.NewOptUUID(r.contact.ID)})

	res, err := r.testEmail(t, api.CampaignTestEmailRequest{AccountID: r.box.ID, Recipient: "Charles@Example.org"})
	require.NoError(t, err)
	require.Equal(t, "charles@example.org", res.Recipient.Value)
	require.Equal(t, preview.Subject.Value, res.Subject.Value, "the test email is what the preview showed")
	require.Equal(t, r.box.ID, res.AccountID.Value)
	require.Eventually(t, func() bool { return r.smtp.Count() == 1 }, 20*time.Second, 50*time.Millisecond)

	m := parseReceived(t, r.smtp.Messages()[0])
	require.Equal(t, "charles@example.org", m.to)
	subject, err := m.header.Subject()
	require.NoError(t, err)
	require.Equal(t, preview.Subject.Value, subject)
	require.Equal(t, preview.BodyPlain.Value, strings.TrimSpace(strings.ReplaceAll(m.plain, "\r\n", "\n")))
	require.Equal(t, 1, strings.Count(m.html, "<p>Ada &amp; team</p>"), "a placed signature is not appended again")
	require.Equal(t, []string{"pricing.pdf", "deck.pdf"}, m.files)
	require.Equal(t, int64(1), orgInt(t, r.env, r.org, "SELECT count(*) FROM audit_log WHERE action = 'send' AND event = 'campaign.test_email' AND target_id = $1", r.camp.ID.String()))

	// With no contact at the recipient's address, the campaign's first lead personalises it.
	createContacts(t, r.c, api.ContactCreate{Email: "grace@example.org", FirstName: api.NewOptString("Grace"),
		Company: api.NewOptString("Navy"), CustomFields: api.NewOptContactCreateCustomFields(api.ContactCreateCustomFields{"industry": "Defence"}),
		Campaigns: []uuid.UUID{r.camp.ID}})
	res, err = r.testEmail(t, api.CampaignTestEmailRequest{AccountID: r.box.ID, Recipient: "qa@example.net", StepID: api.NewOptUUID(r.steps[1])})
	require.NoError(t, err)
	require.True(t, strings.HasPrefix(res.Subject.Value, "Re: "), res.Subject.Value)
	require.True(t, strings.HasSuffix(res.Subject.Value, " Grace"), res.Subject.Value)
	require.Eventually(t, func() bool { return r.smtp.Count() == 2 }, 20*time.Second, 50*time.Millisecond)
	second := parseReceived(t, r.smtp.Messages()[1])
	require.Equal(t, "qa@example.net", second.to)
	require.Equal(t, "Any thoughts, Grace?\n\n-- \nAda\nOutflow", strings.TrimSpace(strings.ReplaceAll(second.plain, "\r\n", "\n")),
		"a step that places no signature gets the mailbox's appended")
	require.Equal(t, []string{"pricing.pdf"}, second.files, "the second step carries only the campaign's file")
}

func TestTestEmailRefusesUnresolvedVariablesAndBadInput(t *testing.T) {
	t.Parallel()
	r := newSendRig(t, append([]api.CampaignStepCreate{}, api.CampaignStepCreate{Subject: api.NewOptString(openerSubject),
		BodyPlain: api.NewOptString(openerPlain)}, api.CampaignStepCreate{Kind: api.NewOptCampaignStepCreateKind(api.CampaignStepCreateKindWait),
		Action: api.NewOptCampaignStepCreateAction(api.CampaignStepCreateAction{"wait_minutes": jx.Raw("60")})}))
	// Nobody has the address and the campaign has no lead: only the email is known.
	_, err := r.testEmail(t, api.CampaignTestEmailRequest{AccountID: r.box.ID, Recipient: "qa@example.net"})
	requireAPIError(t, err, 400, "unresolved_variables")
	var se *api.ErrorStatusCode
	require.ErrorAs(t, err, &se)
	require.Contains(t, se.Response.Message, "FirstName, industry, Company")
	require.NotEmpty(t, se.Response.Fix.Value)
	require.Zero(t, orgInt(t, r.env, r.org, "SELECT count(*) FROM send_tasks"), "nothing is enqueued")

	for _, tc := range []struct {
		req  api.CampaignTestEmailRequest
		code string
	}{
		{api.CampaignTestEmailRequest{AccountID: uuid.New(), Recipient: "charles@example.org"}, "invalid_account_id"},
		{api.CampaignTestEmailRequest{AccountID: r.box.ID, Recipient: "charles@example.org", StepID: api.NewOptUUID(r.steps[1])}, "invalid_step_id"},
		{api.CampaignTestEmailRequest{AccountID: r.box.ID, Recipient: "charles@example.org", StepID: api.NewOptUUID(uuid.New())}, "invalid_step_id"},
	} {
		_, err := r.testEmail(t, tc.req)
		requireAPIError(t, err, 400, tc.code)
	}
	_, err = r.c.CampaignsSendTestEmail(context.Background(), &api.CampaignTestEmailRequest{AccountID: r.box.ID, Recipient: "charles@example.org"},
		api.CampaignsSendTestEmailParams{ID: uuid.New()})
	requireAPIError(t, err, 404, "campaign_not_found")
	reader := r.env.Client(t, scopedKey(t, r.env, r.org, auth.ReadCampaigns))
	_, err = reader.CampaignsSendTestEmail(context.Background(), &api.CampaignTestEmailRequest{AccountID: r.box.ID, Recipient: "charles@example.org"},
		api.CampaignsSendTestEmailParams{ID: r.camp.ID})
	requireAPIError(t, err, 403, "missing_scope")
	require.Zero(t, orgInt(t, r.env, r.org, "SELECT count(*) FROM send_tasks"))
}
