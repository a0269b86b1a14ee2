package handlers_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"fmt"
	"net/textproto"
	"strings"
	"testing"

	ht "github.com/ogen-go/ogen/http"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/outflowhq/outflow/gen/api"
	"github.com/outflowhq/outflow/internal/campaigns/campaign"
	"github.com/outflowhq/outflow/internal/campaigns/compose"
	"github.com/outflowhq/outflow/internal/identity/auth"
	"github.com/outflowhq/outflow/internal/platform/db"
)

// upload sends one file; contentType "" lets the client declare application/octet-stream.
func (r campaignRig) upload(t *testing.T, c *api.Client, id uuid.UUID, step uuid.UUID, name, contentType string, data []byte) (*api.CampaignAttachment, error) {
	t.Helper()
	f := ht.MultipartFile{Name: name, File: bytes.NewReader(data), Size: int64(len(data))}
	if contentType != "" {
		f.Header = textproto.MIMEHeader{"Content-Type": {contentType}}
	}
	req := &api.CampaignsUploadAttachmentReq{File: f}
	if step != uuid.Nil {
		req.StepID = api.NewOptUUID(step)
	}
	return c.CampaignsUploadAttachment(context.Background(), req, api.CampaignsUploadAttachmentParams{ID: id})
}

func (r campaignRig) attachments(t *testing.T, id uuid.UUID) []api.CampaignAttachment {
	t.Helper()
	out, err := r.c.CampaignsListAttachments(context.Background(), api.CampaignsListAttachmentsParams{ID: id})
	require.NoError(t, err)
	return out.Data
}

func TestCampaignAttachmentsAreStoredWithTheirStep(t *testing.T) {
	t.Parallel()
	r := newCampaignRig(t)
	ctx := context.Background()
	cmp := r.campaign(t, api.CampaignCreate{Name: "Files", Steps: named("A", "B")})
	steps := r.steps(t, cmp.ID)
	a, b := steps[0].ID, steps[1].ID

	notes, err := r.upload(t, r.c, cmp.ID, uuid.Nil, "notes.txt", "text/plain; charset=UTF-8", []byte("hello"))
	require.NoError(t, err)
	require.Equal(t, "notes.txt", notes.Filename)
	require.Equal(t, "text/plain; charset=UTF-8", notes.MimeType.Value, "a declared type is kept")
	require.Equal(t, 5, notes.Size.Value)
	require.True(t, notes.StepID.Null, "no step: sent with every step")
	require.Equal(t, cmp.ID, notes.CampaignID)
	require.False(t, notes.URL.Set)

	pdf := []byte("%PDF-1.7\n" + strings.Repeat("x", 100))
	brochure, err := r.upload(t, r.c, cmp.ID, a, `..\..\secret\bro`+"\u200b"+"chure.pdf", "", pdf)
	require.NoError(t, err)
	require.Equal(t, "brochure.pdf", brochure.Filename, "no path, no invisible characters")
	require.Equal(t, "application/pdf", brochure.MimeType.Value, "a generic type is sniffed")
	require.Equal(t, a, brochure.StepID.Value)
	long, err := r.upload(t, r.c, cmp.ID, b, strings.Repeat("n", 300)+".csv", "text/csv", []byte("a,b\n"))
	require.NoError(t, err)
	require.Equal(t, strings.Repeat("n", 251)+".csv", long.Filename, "cut to 255 characters, extension kept")

	_, err = r.upload(t, r.c, cmp.ID, uuid.New(), "x.txt", "", []byte("x"))
	requireAPIError(t, err, 400, "step_not_found")
	_, err = r.upload(t, r.c, cmp.ID, uuid.Nil, "empty.txt", "", nil)
	requireAPIError(t, err, 400, "empty_file")

	list := r.attachments(t, cmp.ID)
	require.Len(t, list, 3)
	require.Equal(t, []uuid.UUID{notes.ID, brochure.ID, long.ID}, []uuid.UUID{list[0].ID, list[1].ID, list[2].ID})

	// A send of step A carries the campaign's files and A's own (compose.StepFiles, what send tasks carry), stored
	// with their content and checksum.
	var files []compose.Attachment
	stored := map[string][2][]byte{}
	require.NoError(t, db.WithOrgTx(ctx, r.env.DB.Pool, r.org, func(ctx context.Context, tx pgx.Tx) (err error) {
		if files, err = compose.StepFiles(ctx, tx, r.org, cmp.ID, uuid.NullUUID{UUID: a, Valid: true}); err != nil {
			return err
		}
		for _, f := range files {
			var content, sum []byte
			if err := tx.QueryRow(ctx, "SELECT content, sha256 FROM campaign_attachments WHERE id = $1", f.ID).Scan(&content, &sum); err != nil {
				return err
			}
			stored[f.Filename] = [2][]byte{content, sum}
		}
		return nil
	}))
	require.Len(t, files, 2)
	require.Equal(t, []byte("hello"), stored["notes.txt"][0])
	require.Equal(t, pdf, stored[files[1].Filename][0])
	sum := sha256.Sum256(pdf)
	require.Equal(t, sum[:], stored[files[1].Filename][1])

	// Deleting a step takes its files; deleting a file answers 204 once.
	require.NoError(t, r.c.CampaignsDeleteStep(ctx, api.CampaignsDeleteStepParams{ID: cmp.ID, Sid: a}))
	require.Len(t, r.attachments(t, cmp.ID), 2)
	require.NoError(t, r.c.CampaignsDeleteAttachment(ctx, api.CampaignsDeleteAttachmentParams{ID: cmp.ID, AttachmentId: notes.ID}))
	requireAPIError(t, r.c.CampaignsDeleteAttachment(ctx, api.CampaignsDeleteAttachmentParams{ID: cmp.ID, AttachmentId: notes.ID}),
		404, "attachment_not_found")
	require.Equal(t, []uuid.UUID{long.ID}, []uuid.UUID{r.attachments(t, cmp.ID)[0].ID})
	require.EqualValues(t, 3, campaignEvents(t, r, "campaign.updated", "change", "attachment_added"))
	require.EqualValues(t, 1, campaignEvents(t, r, "campaign.updated", "change", "attachment_deleted"))
}

func TestCampaignAttachmentsStayWithinTheirLimits(t *testing.T) {
	t.Parallel()
	r := newCampaignRig(t)

	// Each file at most 5 MiB; together at most 10 MiB.
	big := r.campaign(t, api.CampaignCreate{Name: "Big"})
	_, err := r.upload(t, r.c, big.ID, uuid.Nil, "too.bin", "", bytes.Repeat([]byte{1}, campaign.MaxAttachmentBytes+1))
	requireAPIError(t, err, 400, "attachment_too_large")
	for i := range 2 {
		_, err = r.upload(t, r.c, big.ID, uuid.Nil, fmt.Sprintf("full%d.bin", i), "", bytes.Repeat([]byte{1}, 5242880))
		require.NoError(t, err, "exactly 5 MiB is allowed")
	}
	_, err = r.upload(t, r.c, big.ID, uuid.Nil, "byte.bin", "", []byte{1})
	requireAPIError(t, err, 400, "attachments_too_large")
	require.Len(t, r.attachments(t, big.ID), 2)

	// At most 10 files.
	many := r.campaign(t, api.CampaignCreate{Name: "Many"})
	for i := range 10 {
		_, err := r.upload(t, r.c, many.ID, uuid.Nil, fmt.Sprintf("f%d.txt", i), "", []byte("x"))
		require.NoError(t, err)
	}
	_, err = r.upload(t, r.c, many.ID, uuid.Nil, "eleventh.txt", "", []byte("x"))
	requireAPIError(t, err, 400, "too_many_attachments")
	require.Len(t, r.attachments(t, many.ID), 10)
}

func TestCampaignAttachmentsAreTheOrganizationsOwnAndNeedTheWriteScope(t *testing.T) {
	t.Parallel()
	r := newCampaignRig(t)
	ctx := context.Background()
	cmp := r.campaign(t, api.CampaignCreate{Name: "Mine"})
	f, err := r.upload(t, r.c, cmp.ID, uuid.Nil, "a.txt", "", []byte("a"))
	require.NoError(t, err)

	them := r.env.Client(t, r.env.Bootstrap(t, "globex").APIKey)
	_, err = them.CampaignsListAttachments(ctx, api.CampaignsListAttachmentsParams{ID: cmp.ID})
	requireAPIError(t, err, 404, "campaign_not_found")
	_, err = r.upload(t, them, cmp.ID, uuid.Nil, "b.txt", "", []byte("b"))
	requireAPIError(t, err, 404, "campaign_not_found")
	requireAPIError(t, them.CampaignsDeleteAttachment(ctx, api.CampaignsDeleteAttachmentParams{ID: cmp.ID, AttachmentId: f.ID}), 404, "campaign_not_found")

	reader := r.env.Client(t, scopedKey(t, r.env, r.org, auth.ReadCampaigns))
	_, err = reader.CampaignsListAttachments(ctx, api.CampaignsListAttachmentsParams{ID: cmp.ID})
	require.NoError(t, err)
	_, err = r.upload(t, reader, cmp.ID, uuid.Nil, "b.txt", "", []byte("b"))
	requireAPIError(t, err, 403, "missing_scope")
	requireAPIError(t, reader.CampaignsDeleteAttachment(ctx, api.CampaignsDeleteAttachmentParams{ID: cmp.ID, AttachmentId: f.ID}), 403, "missing_scope")
	require.Len(t, r.attachments(t, cmp.ID), 1)
}
