-- AlterTable
ALTER TABLE "users" ADD COLUMN     "password_must_change" BOOLEAN NOT NULL DEFAULT false;
