package campaign

import (
	"context"
	"crypto/sha256"
	"fmt"
	"mime"
	"net/http"
	"path"
	"slices"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	dbq "github.com/outflowhq/outflow/gen/db"
	"github.com/outflowhq/outflow/internal/platform/apierror"
)

// Attachment limits. Files live in Postgres (no filesystem state), so they are held small: a file is sent with
// every message of its step, and a campaign's files are read whole for each send.
const (
	// MaxAttachmentBytes is the largest file a campaign takes (5 MiB; the table's size CHECK holds the same).
	MaxAttachmentBytes = 5 << 20
	// MaxAttachments is how many files one campaign holds.
	MaxAttachments = 10
	// MaxCampaignAttachmentBytes is what a campaign's files may total (10 MiB).
	MaxCampaignAttachmentBytes = 10 << 20
	// maxFilename is the longest stored file name, in characters.
	maxFilename = 255
)

// File is a campaign attachment: its metadata and, when read for sending, its content.
type File struct {
	ID uuid.UUID
	// StepID is the step the file is sent with; NULL sends it with every email step.
	StepID             uuid.NullUUID
	Filename, MimeType string
	Size               int32
	SHA256             []byte
	Content            []byte
	CreatedAt          time.Time
}

// Upload is one file as received: the name and content type its part declared, and its content (read at most
// MaxAttachmentBytes+1 bytes, so a larger file is recognised and refused).
type Upload struct {
	StepID                uuid.NullUUID
	Filename, ContentType string
	Content               []byte
}

// AddAttachment stores a file for a campaign or one of its steps and raises campaign.updated. The name is
// kept without any path or control characters; a missing or generic content type is sniffed from the
// content; the SHA-256 of the content is stored with it.
func (s *Store) AddAttachment(ctx context.Context, tx pgx.Tx, org, id uuid.UUID, up Upload) (File, error) {
	row, err := lock(ctx, tx, org, id)
	if err != nil {
		return File{}, err
	}
	if len(up.Content) == 0 {
		return File{}, apierror.BadRequest("empty_file", "file is empty: upload a file of at least one byte.")
	}
	if len(up.Content) > MaxAttachmentBytes {
		return File{}, apierror.BadRequest("attachment_too_large",
			fmt.Sprintf("file must be at most 5 MiB (%d bytes).", MaxAttachmentBytes))
	}
	if up.StepID.Valid {
		steps, err := Steps(ctx, tx, org, id)
		if err != nil {
			return File{}, err
		}
		if !slices.ContainsFunc(steps, func(s Step) bool { return s.ID == up.StepID.UUID }) {
			return File{}, apierror.BadRequest("step_not_found", fmt.Sprintf("step_id: %s is not a step of this campaign.", up.StepID.UUID))
		}
	}
	usage, err := queries.CampaignAttachmentsUsage(ctx, tx, dbq.CampaignAttachmentsUsageParams{OrganizationID: org, CampaignID: id})
	if err != nil {
		return File{}, err
	}
	if usage.Files >= MaxAttachments {
		return File{}, apierror.BadRequest("too_many_attachments",
			fmt.Sprintf("A campaign holds at most %d attachments; delete one before uploading another.", MaxAttachments))
	}
	if usage.Bytes+int64(len(up.Content)) > MaxCampaignAttachmentBytes {
		return File{}, apierror.BadRequest("attachments_too_large", fmt.Sprintf(
			"A campaign's attachments may total at most 10 MiB (%d bytes); it holds %d bytes, and this file has %d.",
			MaxCampaignAttachmentBytes, usage.Bytes, len(up.Content)))
	}
	sum := sha256.Sum256(up.Content)
	f := File{StepID: up.StepID, Filename: cleanFilename(up.Filename), MimeType: contentType(up.ContentType, up.Content),
		Size: int32(len(up.Content)), SHA256: sum[:]}
	if f.ID, err = uuid.NewV7(); err != nil {
		return File{}, err
	}
	if f.CreatedAt, err = queries.CampaignAttachmentInsert(ctx, tx, dbq.CampaignAttachmentInsertParams{OrganizationID: org,
		CampaignID: id, ID: f.ID, StepID: f.StepID, Filename: f.Filename, MimeType: f.MimeType, Size: f.Size,
		Sha256: f.SHA256, Content: up.Content}); err != nil {
		return File{}, classify(err)
	}
	return f, s.changed(ctx, tx, row, map[string]any{"fields": []string{"attachments"}, "change": "attachment_added",
		"attachment_id": f.ID, "filename": f.Filename, "size": f.Size})
}

// ListAttachments reads a campaign's files without their content, oldest first (404 for an unknown campaign).
func ListAttachments(ctx context.Context, tx pgx.Tx, org, id uuid.UUID) ([]File, error) {
	if _, err := queries.CampaignGet(ctx, tx, dbq.CampaignGetParams{OrganizationID: org, ID: id}); err != nil {
		return nil, classify(err)
	}
	rows, err := queries.CampaignAttachmentsOf(ctx, tx, dbq.CampaignAttachmentsOfParams{OrganizationID: org, CampaignID: id})
	if err != nil {
		return nil, err
	}
	out := make([]File, len(rows))
	for i, r := range rows {
		out[i] = File{ID: r.ID, StepID: r.StepID, Filename: r.Filename, MimeType: r.MimeType, Size: r.Size,
			SHA256: r.Sha256, CreatedAt: r.CreatedAt}
	}
	return out, nil
}

// DeleteAttachment removes one file and raises campaign.updated.
func (s *Store) DeleteAttachment(ctx context.Context, tx pgx.Tx, org, id, fileID uuid.UUID) error {
	row, err := lock(ctx, tx, org, id)
	if err != nil {
		return err
	}
	n, err := queries.CampaignAttachmentDelete(ctx, tx, dbq.CampaignAttachmentDeleteParams{OrganizationID: org, CampaignID: id, ID: fileID})
	if err != nil {
		return err
	}
	if n == 0 {
		return apierror.NotFound("attachment_not_found", "Attachment not found in this campaign.")
	}
	return s.changed(ctx, tx, row, map[string]any{"fields": []string{"attachments"}, "change": "attachment_deleted", "attachment_id": fileID})
}

// cleanFilename keeps the last element of a declared file name without control characters, invalid UTF-8 or
// surrounding spaces, cut to maxFilename characters with its extension kept; nothing left is "attachment".
func cleanFilename(name string) string {
	if i := strings.LastIndexAny(name, `/\`); i >= 0 {
		name = name[i+1:]
	}
	name = strings.TrimSpace(strings.Map(func(r rune) rune {
		if r == utf8.RuneError || unicode.IsControl(r) || unicode.Is(unicode.Cf, r) {
			return -1
		}
		return r
	}, strings.ToValidUTF8(name, "")))
	if name == "" || name == "." || name == ".." {
		return "attachment"
	}
	if r := []rune(name); len(r) > maxFilename {
		ext := []rune(path.Ext(name))
		if len(ext) > 16 {
			ext = nil
		}
		name = strings.TrimSpace(string(r[:maxFilename-len(ext)])) + string(ext)
	}
	return name
}

// genericTypes are content types that say nothing about a file; such a file's type is sniffed instead.
var genericTypes = []string{"", "application/octet-stream", "binary/octet-stream", "application/unknown", "application/x-download"}

// contentType is the declared media type (normalised, with its parameters) unless it is missing, malformed or
// generic, when it is sniffed from the content (http.DetectContentType).
func contentType(declared string, content []byte) string {
	mt, params, err := mime.ParseMediaType(declared)
	if err != nil || slices.Contains(genericTypes, mt) || !strings.Contains(mt, "/") {
		return http.DetectContentType(content)
	}
	if v := mime.FormatMediaType(mt, params); v != "" && len(v) <= 255 {
		return v
	}
	if len(mt) <= 255 {
		return mt
	}
	return http.DetectContentType(content)
}
