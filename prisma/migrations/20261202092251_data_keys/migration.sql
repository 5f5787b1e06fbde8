-- Encryption at rest (docs/encryption.md): each tenant's data keys, wrapped by
-- a key-encryption key that lives with the key provider, never here. A value
-- sealed under a key names the key's id, so a rotation adds a version and the
-- old ones keep opening what they sealed. Destroying a tenant's keys sets
-- destroyed_at and removes the wrapped key: what they sealed is unreadable.
CREATE TABLE "data_keys" (
    "id" TEXT NOT NULL,
    "tenant_id" TEXT NOT NULL DEFAULT 'default',
    "version" INTEGER NOT NULL,
    "kek_id" TEXT NOT NULL,
    "wrapped_key" TEXT,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "retired_at" TIMESTAMPTZ(3),
    "destroyed_at" TIMESTAMPTZ(3),

    CONSTRAINT "data_keys_pkey" PRIMARY KEY ("id"),
    CONSTRAINT "data_keys_wrapped_unless_destroyed" CHECK (("wrapped_key" IS NULL) = ("destroyed_at" IS NOT NULL))
);

CREATE UNIQUE INDEX "data_keys_tenant_id_version_key" ON "data_keys"("tenant_id", "version");
