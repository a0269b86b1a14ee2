package handlers_test

import (
	"bytes"
	"context"
	"encoding/json"
	"image"
	"image/color"
	"image/gif"
	"image/jpeg"
	"image/png"
	"io"
	"mime/multipart"
	"net/http"
	"net/url"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	ht "github.com/ogen-go/ogen/http"
	"github.com/stretchr/testify/require"

	"github.com/outflowhq/outflow/gen/api"
	"github.com/outflowhq/outflow/handlers/apitest"
	"github.com/outflowhq/outflow/internal/platform/config"
)

// profileEnv runs the API with a private avatar directory and room for avatars bigger than the 2 MB limit.
func profileEnv(t *testing.T) *apitest.Env {
	t.Helper()
	dir := t.TempDir()
	return apitest.New(t, func(c *config.Config) {
		c.AvatarDir = dir
		c.MaxBodyBytes = 10 << 20
	})
}

// profileRaw sends a raw JSON request (for bodies the SDK refuses to send) and returns the status and error code.
func profileRaw(t *testing.T, env *apitest.Env, method, path, token, body string) (int, string) {
	t.Helper()
	resp := env.Do(t, method, path, token, strings.NewReader(body), http.Header{"Content-Type": {"application/json"}})
	var e struct {
		Code string `json:"code"`
	}
	_ = json.NewDecoder(resp.Body).Decode(&e)
	return resp.StatusCode, e.Code
}

func TestGetMe(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	ctx := context.Background()
	pair := env.SignUp(t, "ada@example.com")
	client := env.Client(t, pair.AccessToken)

	me, err := client.AuthGetMe(ctx)
	require.NoError(t, err)
	require.Equal(t, "ada@example.com", me.Email)
	require.Empty(t, me.FirstName)
	require.Empty(t, me.LastName)
	require.Equal(t, api.OptNilString{Set: true, Null: true}, me.AvatarURL)
	require.Equal(t, api.OptNilString{Set: true, Null: true}, me.ReferralSource)
	require.Equal(t, api.OptNilDateTime{Set: true, Null: true}, me.OnboardingCompletedAt)
	require.Empty(t, me.Roles, "the owner role is built in: it has no id")
	require.False(t, me.IsAdmin)
	require.Equal(t, api.NewOptInt(0), me.AdminPermissions)
	require.WithinDuration(t, time.Now(), me.CreatedAt, time.Minute)
	require.WithinDuration(t, time.Now(), me.UpdatedAt, time.Minute)

	// Every field of the seed is on the wire; the label registries are empty lists, not null.
	resp := env.Do(t, http.MethodGet, "/v1/auth/me", pair.AccessToken, nil, nil)
	require.Equal(t, http.StatusOK, resp.StatusCode)
	var raw map[string]json.RawMessage
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&raw))
	for _, f := range []string{"id", "first_name", "last_name", "email", "avatar_url", "roles", "referral_source",
		"onboarding_completed_at", "max_organizations", "free_trial_used", "admin_permissions", "is_admin", "folders",
		"tags", "categories", "created_at", "updated_at"} {
		require.Contains(t, raw, f)
	}
	for _, f := range []string{"roles", "folders", "tags", "categories"} {
		require.JSONEq(t, `[]`, string(raw[f]), f)
	}

	// Limits and operator flags come from the account.
	owner := env.DB.OwnerPool(t)
	_, err = owner.Exec(ctx, `UPDATE users SET max_organizations = 3, free_trial_used = true, admin_permissions = 5 WHERE id = $1`, me.ID)
	require.NoError(t, err)
	me, err = client.AuthGetMe(ctx)
	require.NoError(t, err)
	require.Equal(t, api.NewOptInt(3), me.MaxOrganizations)
	require.Equal(t, api.NewOptBool(true), me.FreeTrialUsed)
	require.Equal(t, api.NewOptInt(5), me.AdminPermissions)
	require.True(t, me.IsAdmin)

	// A custom role is an id: it is what roles lists for the selected organization.
	roleID := uuid.New()
	_, err = owner.Exec(ctx, `INSERT INTO custom_roles (organization_id, id, name, permissions)
		SELECT organization_id, $2, 'Reviewer', 8 FROM memberships WHERE user_id = $1`, me.ID, roleID)
	require.NoError(t, err)
	_, err = owner.Exec(ctx, `UPDATE memberships SET role = $2 WHERE user_id = $1`, me.ID, roleID.String())
	require.NoError(t, err)
	me, err = client.AuthGetMe(ctx)
	require.NoError(t, err)
	require.Equal(t, []uuid.UUID{roleID}, me.Roles)

	_, err = env.Client(t, env.Bootstrap(t, "acme").APIKey).AuthGetMe(ctx)
	requireAPIError(t, err, 403, "session_required")
	_, err = env.Client(t, "").AuthGetMe(ctx)
	requireAPIError(t, err, 401, "missing_credential")
}

func TestUpdateMeAndOnboarding(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	ctx := context.Background()
	pair := env.SignUp(t, "ada@example.com")
	client := env.Client(t, pair.AccessToken)
	before, err := client.AuthGetMe(ctx)
	require.NoError(t, err)
	updatedAt := func() (at time.Time) {
		require.NoError(t, env.DB.Pool.QueryRow(ctx, `SELECT updated_at FROM users WHERE id = $1`, before.ID).Scan(&at))
		return at
	}
	stampBefore := updatedAt()

	require.NoError(t, client.AuthUpdateMe(ctx, &api.UpdateProfileRequest{FirstName: "  Ada ", LastName: "Lovelace"}, api.AuthUpdateMeParams{}))
	me, err := client.AuthGetMe(ctx)
	require.NoError(t, err)
	require.Equal(t, "Ada", me.FirstName)
	require.Equal(t, "Lovelace", me.LastName)
	require.True(t, updatedAt().After(stampBefore))

	// 50 characters is the limit, counted in characters, not bytes.
	long := strings.Repeat("é", 50)
	require.NoError(t, client.AuthUpdateMe(ctx, &api.UpdateProfileRequest{FirstName: long, LastName: "L"}, api.AuthUpdateMeParams{}))
	err = client.AuthUpdateMe(ctx, &api.UpdateProfileRequest{FirstName: "   ", LastName: "L"}, api.AuthUpdateMeParams{})
	requireAPIError(t, err, 400, "invalid_name")
	for _, body := range []string{
		`{"first_name":"","last_name":"L"}`,
		`{"first_name":"A","last_name":"` + strings.Repeat("x", 51) + `"}`,
		`{"first_name":"A"}`,
		`not json`,
	} {
		status, _ := profileRaw(t, env, http.MethodPatch, "/v1/auth/me", pair.AccessToken, body)
		require.Equal(t, http.StatusBadRequest, status, body)
	}

	// Onboarding saves the names and the survey and stamps the first completion.
	require.NoError(t, client.AuthCompleteOnboarding(ctx, &api.OnboardingCompleteRequest{FirstName: "Ada", LastName: "King",
		ReferralSource: api.OnboardingCompleteRequestReferralSourceReddit,
		Role:           api.NewOptOnboardingCompleteRequestRole(api.OnboardingCompleteRequestRoleFounder),
		TeamSize:       api.NewOptOnboardingCompleteRequestTeamSize(api.OnboardingCompleteRequestTeamSize210)}, api.AuthCompleteOnboardingParams{}))
	me, err = client.AuthGetMe(ctx)
	require.NoError(t, err)
	require.Equal(t, "King", me.LastName)
	require.Equal(t, api.NewOptNilString("reddit"), me.ReferralSource)
	stamped, ok := me.OnboardingCompletedAt.Get()
	require.True(t, ok)
	var role, teamSize string
	require.NoError(t, env.DB.Pool.QueryRow(ctx, `SELECT onboarding_role, onboarding_team_size FROM users WHERE id = $1`, me.ID).Scan(&role, &teamSize))
	require.Equal(t, []string{"founder", "2-10"}, []string{role, teamSize})

	require.NoError(t, client.AuthCompleteOnboarding(ctx, &api.OnboardingCompleteRequest{FirstName: "Ada", LastName: "King",
		ReferralSource: api.OnboardingCompleteRequestReferralSourceGoogle}, api.AuthCompleteOnboardingParams{}))
	me, err = client.AuthGetMe(ctx)
	require.NoError(t, err)
	require.Equal(t, api.NewOptNilString("google"), me.ReferralSource)
	again, _ := me.OnboardingCompletedAt.Get()
	require.True(t, stamped.Equal(again), "the first completion is kept")

	err = client.AuthCompleteOnboarding(ctx, &api.OnboardingCompleteRequest{FirstName: " ", LastName: "King",
		ReferralSource: api.OnboardingCompleteRequestReferralSourceX}, api.AuthCompleteOnboardingParams{})
	requireAPIError(t, err, 400, "invalid_name")
	for _, body := range []string{
		`{"first_name":"A","last_name":"B","referral_source":"tiktok"}`,
		`{"first_name":"A","last_name":"B","referral_source":"x","role":"ceo"}`,
		`{"first_name":"A","last_name":"B","referral_source":"x","team_size":"1000"}`,
		`{"first_name":"A","last_name":"B"}`,
	} {
		status, _ := profileRaw(t, env, http.MethodPatch, "/v1/auth/me/onboarding", pair.AccessToken, body)
		require.Equal(t, http.StatusBadRequest, status, body)
	}

	key := env.Client(t, env.Bootstrap(t, "acme").APIKey)
	requireAPIError(t, key.AuthUpdateMe(ctx, &api.UpdateProfileRequest{FirstName: "A", LastName: "B"}, api.AuthUpdateMeParams{}), 403, "session_required")
	requireAPIError(t, key.AuthCompleteOnboarding(ctx, &api.OnboardingCompleteRequest{FirstName: "A", LastName: "B",
		ReferralSource: api.OnboardingCompleteRequestReferralSourceX}, api.AuthCompleteOnboardingParams{}), 403, "session_required")
	requireAPIError(t, env.Client(t, "").AuthUpdateMe(ctx, &api.UpdateProfileRequest{FirstName: "A", LastName: "B"}, api.AuthUpdateMeParams{}), 401, "missing_credential")
}

func encodeImage(t *testing.T, format string, w, h int) []byte {
	t.Helper()
	img := image.NewRGBA(image.Rect(0, 0, w, h))
	for x := range w {
		img.Set(x, x%h, color.RGBA{R: uint8(x), G: 100, B: 200, A: 255})
	}
	var b bytes.Buffer
	switch format {
	case "png":
		require.NoError(t, png.Encode(&b, img))
	case "jpeg":
		require.NoError(t, jpeg.Encode(&b, img, nil))
	case "gif":
		require.NoError(t, gif.Encode(&b, img, nil))
	}
	return b.Bytes()
}

func upload(ctx context.Context, client *api.Client, name string, data []byte) (*api.AvatarUploadResult, error) {
	return client.AuthUploadAvatar(ctx, &api.AvatarUploadMultipart{File: ht.MultipartFile{Name: name, File: bytes.NewReader(data)}},
		api.AuthUploadAvatarParams{})
}

// fetchAvatar GETs an avatar URL from the test server (its host is the configured public URL, not the test's).
func fetchAvatar(t *testing.T, env *apitest.Env, avatarURL string) *http.Response {
	t.Helper()
	u, err := url.Parse(avatarURL)
	require.NoError(t, err)
	return env.Do(t, http.MethodGet, u.Path, "", nil, nil)
}

func TestAvatarUploadServeAndDelete(t *testing.T) {
	t.Parallel()
	env := profileEnv(t)
	ctx := context.Background()
	pair := env.SignUp(t, "ada@example.com")
	client := env.Client(t, pair.AccessToken)

	// The content decides, not the name.
	pngData := encodeImage(t, "png", 1024, 1024)
	res, err := upload(ctx, client, "portrait.txt", pngData)
	require.NoError(t, err)
	require.True(t, strings.HasPrefix(res.AvatarURL, env.Config.PublicURL+"/avatars/"), res.AvatarURL)
	require.True(t, strings.HasSuffix(res.AvatarURL, ".png"))
	me, err := client.AuthGetMe(ctx)
	require.NoError(t, err)
	require.Equal(t, api.NewOptNilString(res.AvatarURL), me.AvatarURL)

	resp := fetchAvatar(t, env, res.AvatarURL)
	require.Equal(t, http.StatusOK, resp.StatusCode)
	require.Equal(t, "image/png", resp.Header.Get("Content-Type"))
	require.Equal(t, "nosniff", resp.Header.Get("X-Content-Type-Options"))
	served, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	require.Equal(t, pngData, served)

	// A replacement gets a new URL and the old file goes.
	jpegRes, err := upload(ctx, client, "avatar.png", encodeImage(t, "jpeg", 200, 100))
	require.NoError(t, err)
	require.True(t, strings.HasSuffix(jpegRes.AvatarURL, ".jpg"))
	require.Equal(t, http.StatusNotFound, fetchAvatar(t, env, res.AvatarURL).StatusCode)
	resp = fetchAvatar(t, env, jpegRes.AvatarURL)
	require.Equal(t, http.StatusOK, resp.StatusCode)
	require.Equal(t, "image/jpeg", resp.Header.Get("Content-Type"))
	files, err := os.ReadDir(env.Config.AvatarDir)
	require.NoError(t, err)
	require.Len(t, files, 1)

	// Refusals leave the current avatar alone.
	truncated := encodeImage(t, "png", 300, 300)
	truncated = truncated[:len(truncated)/2]
	oversized := append(append([]byte{}, pngData...), make([]byte, 2<<20)...)
	for _, tc := range []struct {
		name string
		data []byte
		code string
	}{
		{"gif", encodeImage(t, "gif", 10, 10), "avatar_not_image"},
		{"text", []byte("hello, this is not a picture"), "avatar_not_image"},
		{"empty", nil, "avatar_not_image"},
		{"truncated png", truncated, "avatar_not_image"},
		{"too wide", encodeImage(t, "png", 1025, 10), "avatar_dimensions_too_large"},
		{"too tall", encodeImage(t, "jpeg", 10, 1025), "avatar_dimensions_too_large"},
		{"over 2 MB", oversized, "avatar_too_large"},
	} {
		_, err := upload(ctx, client, "a.png", tc.data)
		requireAPIError(t, err, 400, tc.code)
	}
	me, err = client.AuthGetMe(ctx)
	require.NoError(t, err)
	require.Equal(t, api.NewOptNilString(jpegRes.AvatarURL), me.AvatarURL)

	// A form without the file field.
	var body bytes.Buffer
	form := multipart.NewWriter(&body)
	require.NoError(t, form.WriteField("other", "x"))
	require.NoError(t, form.Close())
	resp = env.Do(t, http.MethodPost, "/v1/auth/me/avatar", pair.AccessToken, &body, http.Header{"Content-Type": {form.FormDataContentType()}})
	require.Equal(t, http.StatusBadRequest, resp.StatusCode)

	// Delete clears the URL and the file; deleting again still succeeds.
	require.NoError(t, client.AuthDeleteAvatar(ctx, api.AuthDeleteAvatarParams{}))
	me, err = client.AuthGetMe(ctx)
	require.NoError(t, err)
	require.Equal(t, api.OptNilString{Set: true, Null: true}, me.AvatarURL)
	require.Equal(t, http.StatusNotFound, fetchAvatar(t, env, jpegRes.AvatarURL).StatusCode)
	require.NoError(t, client.AuthDeleteAvatar(ctx, api.AuthDeleteAvatarParams{}))

	// Only stored avatar names are ever served.
	for _, path := range []string{"/avatars/", "/avatars/.upload-1", "/avatars/" + strings.Repeat("a", 32) + ".png", "/avatars/..%2fgo.mod"} {
		require.Equal(t, http.StatusNotFound, env.Do(t, http.MethodGet, path, "", nil, nil).StatusCode, path)
	}

	key := env.Client(t, env.Bootstrap(t, "acme").APIKey)
	_, err = upload(ctx, key, "a.png", pngData)
	requireAPIError(t, err, 403, "session_required")
	requireAPIError(t, key.AuthDeleteAvatar(ctx, api.AuthDeleteAvatarParams{}), 403, "session_required")
	_, err = upload(ctx, env.Client(t, ""), "a.png", pngData)
	requireAPIError(t, err, 401, "missing_credential")
}

func TestGetMeListsTheWorkspaceLabels(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	ctx := context.Background()
	ada := orgSignUp(t, env, "ada@example.com")
	folder, err := ada.client.LabelsCreateFolder(ctx, &api.CreateLabel{Title: "Q4"}, api.LabelsCreateFolderParams{})
	require.NoError(t, err)
	tag, err := ada.client.LabelsCreateTag(ctx, &api.CreateLabel{Title: "Warm"}, api.LabelsCreateTagParams{})
	require.NoError(t, err)
	cat, err := ada.client.LabelsCreateCategory(ctx, &api.CreateLabel{Title: "Hot"}, api.LabelsCreateCategoryParams{})
	require.NoError(t, err)

	me, err := ada.client.AuthGetMe(ctx)
	require.NoError(t, err)
	require.Equal(t, []api.UserLabelGroup{{ID: api.NewOptUUID(folder.ID), Name: api.NewOptString("Q4")}}, me.Folders)
	require.Equal(t, []api.UserLabelGroup{{ID: api.NewOptUUID(tag.ID), Name: api.NewOptString("Warm")}}, me.Tags)
	require.Equal(t, []api.UserLabelGroup{{ID: api.NewOptUUID(cat.ID), Name: api.NewOptString("Hot")}}, me.Categories)

	// Another person's workspace lists its own registries only.
	bob := orgSignUp(t, env, "bob@example.com")
	me, err = bob.client.AuthGetMe(ctx)
	require.NoError(t, err)
	require.Empty(t, me.Folders)
	require.Empty(t, me.Categories)
}
