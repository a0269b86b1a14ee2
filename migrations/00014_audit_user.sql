-- +goose Up
-- Every audit entry names the person behind it when it is written: the signed-in user, the owner of the API
-- key, or the person who approved the OAuth grant. Deriving it at read time lost the person once a key was
-- deleted and never knew it for OAuth tokens. Existing entries are filled in from what is still known.
ALTER TABLE audit_log ADD COLUMN user_id uuid;
UPDATE audit_log SET user_id = actor_id WHERE actor_type = 'user';
UPDATE audit_log a SET user_id = k.user_id
FROM api_keys k WHERE a.actor_type = 'api_key' AND k.organization_id = a.organization_id AND k.id = a.actor_id;
UPDATE audit_log a SET user_id = g.user_id
FROM oauth_grants g WHERE a.actor_type = 'oauth_app' AND g.organization_id = a.organization_id AND g.id = a.actor_id;
