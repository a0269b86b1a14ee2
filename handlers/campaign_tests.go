package handlers

import (
	"context"
	"fmt"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/outflowhq/outflow/gen/api"
	dbq "github.com/outflowhq/outflow/gen/db"
	"github.com/outflowhq/outflow/internal/campaigns/campaign"
	"github.com/outflowhq/outflow/internal/campaigns/compose"
	"github.com/outflowhq/outflow/internal/campaigns/template"
	"github.com/outflowhq/outflow/internal/campaigns/testrun"
	"github.com/outflowhq/outflow/internal/eventing/events"
	"github.com/outflowhq/outflow/internal/identity/auth"
	"github.com/outflowhq/outflow/internal/platform/db"
)

// CampaignTests serves what a person checks a campaign's messages with before it sends: the template preview
// (internal/campaigns/compose), the test email and test runs (internal/campaigns/testrun). Permissions are
// checked by the route table; the mailboxes a scoped API key may use are checked here, since they come in bodies.
type CampaignTests struct {
	pool  *pgxpool.Pool
	store *campaign.Store
	jobs  events.Inserter
	runs  *testrun.Runner
}

// NewCampaignTests builds the test operations: campaigns are read through store, sends and test-run steps
// are enqueued through jobs, and runs carries test runs.
func NewCampaignTests(pool *pgxpool.Pool, store *campaign.Store, jobs events.Inserter, runs *testrun.Runner) *CampaignTests {
	return &CampaignTests{pool: pool, store: store, jobs: jobs, runs: runs}
}

// onlyMailboxes is the mailboxes a mailbox-scoped API key may use (nil: every mailbox of the organization).
func onlyMailboxes(ctx context.Context) []uuid.UUID {
	if p := auth.PrincipalFrom(ctx); p != nil && p.AllowedMailboxes != nil {
		return append([]uuid.UUID{}, p.AllowedMailboxes...)
	}
	return nil
}

// CampaignsTemplatePreview renders content (or a step's) for a stored or inline contact, in the context the
// ids give, and lists what did not resolve. Nothing is stored or sent.
func (h *CampaignTests) CampaignsTemplatePreview(ctx context.Context, req *api.TemplatePreviewRequest) (*api.TemplatePreview, error) {
	org, err := tenantCaller(ctx)
	if err != nil {
		return nil, err
	}
	in := compose.PreviewInput{
		Content:   compose.Content{Subject: req.Subject.Value, Plain: req.BodyPlain.Value, HTML: req.BodyHTML.Value},
		StepID:    nullUUID(req.StepID),
		ContactID: nullUUID(req.ContactID),
		MailboxID: nullUUID(req.AccountID),
		Only:      onlyMailboxes(ctx),
	}
	if v, ok := req.Contact.Get(); ok {
		in.Inline = &template.Contact{FirstName: v.FirstName.Value, LastName: v.LastName.Value, Email: v.Email.Value,
			Company: v.Company.Value, Phone: v.Phone.Value, Custom: v.CustomFields.Value}
	}
	var p compose.Preview
	err = db.WithOrgTx(ctx, h.pool, org, func(ctx context.Context, tx pgx.Tx) error {
		if id, ok := req.CampaignID.Get(); ok {
			c, err := h.store.Get(ctx, tx, org, id)
			if err != nil {
				return err
			}
			in.Campaign = &c
		}
		p, err = compose.RenderPreview(ctx, tx, org, in)
		return err
	})
	if err != nil {
		return nil, err
	}
	out := &api.TemplatePreview{Subject: api.NewOptString(p.Subject), BodyHTML: api.NewOptString(p.HTML),
		BodyPlain: api.NewOptString(p.Plain), Errors: orEmpty(p.Problems), Unresolved: orEmpty(p.Unresolved),
		Attachments: []api.TemplatePreviewAttachmentsItem{}}
	if p.From != nil {
		out.From = api.NewOptTemplatePreviewFrom(api.TemplatePreviewFrom{Name: api.NewOptString(p.From.Name), Email: api.NewOptString(p.From.Email)})
	}
	for _, f := range p.Attachments {
		out.Attachments = append(out.Attachments, api.TemplatePreviewAttachmentsItem{ID: api.NewOptUUID(f.ID),
			Filename: api.NewOptString(f.Filename), Size: api.NewOptInt(int(f.Size)), MimeType: api.NewOptString(f.MimeType)})
	}
	return out, nil
}

// CampaignsSendTestEmail sends one step of the campaign to a test recipient through the send pipeline.
func (h *CampaignTests) CampaignsSendTestEmail(ctx context.Context, req *api.CampaignTestEmailRequest, params api.CampaignsSendTestEmailParams) (*api.CampaignTestEmailResult, error) {
	org, err := tenantCaller(ctx)
	if err != nil {
		return nil, err
	}
	in := testrun.EmailInput{MailboxID: req.AccountID, Recipient: req.Recipient, StepID: nullUUID(req.StepID), Only: onlyMailboxes(ctx)}
	var task dbq.SendTask
	err = db.WithOrgTx(ctx, h.pool, org, func(ctx context.Context, tx pgx.Tx) error {
		c, err := h.store.Get(ctx, tx, org, params.ID)
		if err != nil {
			return err
		}
		task, err = testrun.SendEmail(ctx, tx, h.jobs, org, c, in)
		return err
	})
	if err != nil {
		return nil, err
	}
	return &api.CampaignTestEmailResult{
		Message:   api.NewOptString(fmt.Sprintf("Test email queued: from %s to %s.", task.FromEmail, task.ToEmail)),
		Recipient: api.NewOptString(task.ToEmail), Subject: api.NewOptString(task.Subject),
		AccountID: api.NewOptUUID(task.MailboxID.UUID),
	}, nil
}

// nullUUID spells an optional id of a request as a nullable one.
func nullUUID(v api.OptUUID) uuid.NullUUID {
	id, ok := v.Get()
	return uuid.NullUUID{UUID: id, Valid: ok}
}
