package sending_test

import (
	"context"
	"crypto/sha256"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/emersion/go-message/mail"
	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	dbq "github.com/outflowhq/outflow/gen/db"
	"github.com/outflowhq/outflow/internal/mail/sending"
	"github.com/outflowhq/outflow/internal/platform/db"
)

func TestATaskCarriesItsCampaignAttachmentsAsFileParts(t *testing.T) {
	t.Parallel()
	r := newRig(t)
	ctx := context.Background()
	campaign, kept, gone := uuid.New(), uuid.New(), uuid.New()
	pdf := []byte("%PDF-1.4 pricing sheet")
	require.NoError(t, db.WithOrgTx(ctx, r.env.DB.Pool, r.org, func(ctx context.Context, tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, "INSERT INTO campaigns (organization_id, id, name) VALUES ($1, $2, 'Files')", r.org, campaign); err != nil {
			return err
		}
		for id, name := range map[uuid.UUID]string{kept: "pricing.pdf", gone: "old.pdf"} {
			sum := sha256.Sum256(pdf)
			if _, err := tx.Exec(ctx, `INSERT INTO campaign_attachments (organization_id, campaign_id, id, filename, mime_type, size, sha256, content)
				VALUES ($1, $2, $3, $4, 'application/pdf', $5, $6, $7)`, r.org, campaign, id, name, len(pdf), sum[:], pdf); err != nil {
				return err
			}
		}
		m, err := dbq.New().MailboxGet(ctx, tx, dbq.MailboxGetParams{OrganizationID: r.org, ID: r.box.ID})
		if err != nil {
			return err
		}
		_, err = sending.Enqueue(ctx, tx, r.jobs, m, sending.Message{Kind: sending.KindCampaign, To: []string{"bob@example.com"},
			Subject: "Pricing", Text: "See attached", HTML: "<p>See attached</p>", Attachments: []uuid.UUID{kept, gone}})
		return err
	}))
	// A file deleted after the task was written is left out of the message.
	require.NoError(t, db.WithOrgTx(ctx, r.env.DB.Pool, r.org, func(ctx context.Context, tx pgx.Tx) error {
		_, err := tx.Exec(ctx, "DELETE FROM campaign_attachments WHERE id = $1", gone)
		return err
	}))
	r.env.StartWorkers(t)
	require.Eventually(t, func() bool { return len(r.smtp.Messages()) == 1 }, 10*time.Second, 20*time.Millisecond)

	mr, err := mail.CreateReader(strings.NewReader(string(r.smtp.Messages()[0].Data)))
	require.NoError(t, err)
	require.Contains(t, mr.Header.Get("Content-Type"), "multipart/mixed")
	var bodies, files []string
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
			bodies = append(bodies, strings.TrimSpace(string(raw)))
		case *mail.AttachmentHeader:
			name, err := h.Filename()
			require.NoError(t, err)
			ct, _, _ := h.ContentType()
			require.Equal(t, "application/pdf", ct)
			require.Equal(t, pdf, raw)
			files = append(files, name)
		}
	}
	require.Equal(t, []string{"See attached", "<p>See attached</p>"}, bodies)
	require.Equal(t, []string{"pricing.pdf"}, files)
}
