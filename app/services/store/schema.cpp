// The schema steps (see schema.h): one per feature that brought tables, oldest first.
#include "schema.h"

const QList<SchemaStep>& schemaSteps() {
  static const QList<SchemaStep> steps = {
      {1,
       "chats and their message trees",
       {
           "CREATE TABLE chats ("
           " id INTEGER PRIMARY KEY,"
           " title TEXT NOT NULL,"
           " system_prompt TEXT NOT NULL DEFAULT '',"
           " created_ms INTEGER NOT NULL,"
           " updated_ms INTEGER NOT NULL,"
           " trashed_ms INTEGER,"
           // The chosen first message (a chat may have several when the first one was edited).
           " active_root_id INTEGER REFERENCES messages(id) ON DELETE SET NULL)",
           "CREATE TABLE messages ("
           " id INTEGER PRIMARY KEY,"
           " chat_id INTEGER NOT NULL REFERENCES chats(id) ON DELETE CASCADE,"
           // No cascade on the parent: a deep chat would exceed SQLite's trigger depth. Subtrees are
           // deleted in one statement (ChatStore::deleteMessage), checked at its end.
           " parent_id INTEGER REFERENCES messages(id),"
           " active_child_id INTEGER REFERENCES messages(id) ON DELETE SET NULL,"
           " role TEXT NOT NULL CHECK (role IN ('system', 'user', 'assistant')),"
           " content TEXT NOT NULL,"
           " created_ms INTEGER NOT NULL,"
           " complete INTEGER NOT NULL DEFAULT 1,"
           " stats TEXT,"
           " settings TEXT)",
           "CREATE INDEX messages_by_parent ON messages(chat_id, parent_id)",
           "CREATE INDEX chats_by_update ON chats(trashed_ms, updated_ms)",
       }},
      {2,
       "folders, tags and full-text search",
       {
           "CREATE TABLE folders (id INTEGER PRIMARY KEY, name TEXT NOT NULL UNIQUE)",
           "ALTER TABLE chats ADD COLUMN folder_id INTEGER REFERENCES folders(id) ON DELETE SET NULL",
           "CREATE TABLE chat_tags ("
           " chat_id INTEGER NOT NULL REFERENCES chats(id) ON DELETE CASCADE,"
           " tag TEXT NOT NULL,"
           " PRIMARY KEY (chat_id, tag)) WITHOUT ROWID",
           // External-content FTS5 over messages.content, kept in sync by the triggers below.
           "CREATE VIRTUAL TABLE message_search USING fts5("
           " content, content='messages', content_rowid='id', tokenize='unicode61 remove_diacritics 2')",
           "CREATE TRIGGER messages_search_insert AFTER INSERT ON messages BEGIN"
           " INSERT INTO message_search(rowid, content) VALUES (new.id, new.content); END",
           "CREATE TRIGGER messages_search_delete AFTER DELETE ON messages BEGIN"
           " INSERT INTO message_search(message_search, rowid, content) VALUES ('delete', old.id, old.content); END",
           "CREATE TRIGGER messages_search_update AFTER UPDATE OF content ON messages BEGIN"
           " INSERT INTO message_search(message_search, rowid, content) VALUES ('delete', old.id, old.content);"
           " INSERT INTO message_search(rowid, content) VALUES (new.id, new.content); END",
           // Messages written by version 1 enter the index now.
           "INSERT INTO message_search(message_search) VALUES ('rebuild')",
       }},
      {3,
       "Playground presets and recently opened models",
       {
           "CREATE TABLE presets ("
           " name TEXT PRIMARY KEY,"
           " settings TEXT NOT NULL,"
           " updated_ms INTEGER NOT NULL)",
           "CREATE TABLE recent_models ("
           " path TEXT PRIMARY KEY,"
           " name TEXT NOT NULL,"
           " architecture TEXT NOT NULL DEFAULT '',"
           " format TEXT NOT NULL DEFAULT '',"
           " weights TEXT NOT NULL DEFAULT '',"
           " parameter_count INTEGER NOT NULL DEFAULT 0,"
           " context_length INTEGER NOT NULL DEFAULT 0,"
           " last_opened_ms INTEGER NOT NULL)",
       }},
      {4,
       "training runs, their metrics and sample generations",
       {
           // status: queued, running, paused, done, failed, cancelled (strings, see runstore.h).
           "CREATE TABLE runs ("
           " id INTEGER PRIMARY KEY,"
           " name TEXT NOT NULL,"
           " recipe TEXT NOT NULL,"
           " model_path TEXT NOT NULL,"
           " settings TEXT NOT NULL,"
           " status TEXT NOT NULL CHECK (status IN ('queued', 'running', 'paused', 'done', 'failed', 'cancelled')),"
           " output_dir TEXT NOT NULL DEFAULT '',"
           " error TEXT NOT NULL DEFAULT '',"
           " total_steps INTEGER NOT NULL DEFAULT 0,"
           " created_ms INTEGER NOT NULL,"
           " started_ms INTEGER,"
           " finished_ms INTEGER)",
           // One row per optimizer step; a resumed run rewrites the steps after its checkpoint (REPLACE).
           "CREATE TABLE metrics ("
           " run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,"
           " step INTEGER NOT NULL,"
           " loss REAL,"
           " val_loss REAL,"
           " lr REAL,"
           " grad_norm REAL,"
           " tokens_per_s REAL,"
           " elapsed_s REAL,"
           " skipped INTEGER NOT NULL DEFAULT 0,"
           " PRIMARY KEY (run_id, step)) WITHOUT ROWID",
           "CREATE TABLE samples ("
           " run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,"
           " step INTEGER NOT NULL,"
           " prompt TEXT NOT NULL,"
           " text TEXT NOT NULL,"
           " PRIMARY KEY (run_id, step, prompt)) WITHOUT ROWID",
       }},
      {5,
       "inspection snapshots of chat messages",
       {
           // blob: engine::serialize_inspection of the chat up to and including the message. Deleting
           // the message (or its chat, whose messages cascade) deletes its snapshots.
           "CREATE TABLE inspections ("
           " id INTEGER PRIMARY KEY,"
           " message_id INTEGER NOT NULL REFERENCES messages(id) ON DELETE CASCADE,"
           " created_ms INTEGER NOT NULL,"
           " model TEXT NOT NULL DEFAULT '',"
           " token_count INTEGER NOT NULL DEFAULT 0,"
           " blob BLOB NOT NULL)",
           "CREATE INDEX inspections_by_message ON inspections(message_id, id)",
       }},
      {6,
       "preference pairs collected in Chat",
       {
           // A reply compared with a second one and the user's pick (PreferenceStore). prompt: the
           // conversation up to and including the user turn both replies answer, as a JSON message list
           // [{"role", "content"}] (the trainer's conversational prompt). A pair is training data the
           // user chose to keep, so it outlives its chat: chat_id only says where it came from.
           "CREATE TABLE preference_pairs ("
           " id INTEGER PRIMARY KEY,"
           " chat_id INTEGER REFERENCES chats(id) ON DELETE SET NULL,"
           " prompt TEXT NOT NULL,"
           " chosen TEXT NOT NULL,"
           " rejected TEXT NOT NULL,"
           " chosen_edited INTEGER NOT NULL DEFAULT 0,"
           " model TEXT NOT NULL DEFAULT '',"
           " created_ms INTEGER NOT NULL)",
           "CREATE INDEX preference_pairs_by_chat ON preference_pairs(chat_id)",
       }},
      {7,
       "the named metrics of training steps and scored completions",
       {
           // Every metric an objective reports under its own name (TRL's: "objective/kl", "rewards/margins",
           // "accuracy", ...; validation ones as "val_<name>"), one row per (run, name, step): the fixed
           // columns of `metrics` cannot hold a set that differs by recipe. Keyed by name first because the
           // dashboard reads one series at a time. value NULL: not finite. A resumed run rewrites its steps
           // (REPLACE), like `metrics`.
           "CREATE TABLE run_metric_values ("
           " run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,"
           " name TEXT NOT NULL,"
           " step INTEGER NOT NULL,"
           " value REAL,"
           " PRIMARY KEY (run_id, name, step)) WITHOUT ROWID",
           // The completions an online recipe (PPO) samples at a step, with the reward each got. `samples`
           // cannot hold them: its key (run, step, prompt) allows one text per prompt, and a step may sample
           // several completions of one prompt. idx: the completion's place in the step's list.
           "CREATE TABLE run_completions ("
           " run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,"
           " step INTEGER NOT NULL,"
           " idx INTEGER NOT NULL,"
           " prompt TEXT NOT NULL,"
           " completion TEXT NOT NULL,"
           " score REAL,"
           " PRIMARY KEY (run_id, step, idx)) WITHOUT ROWID",
       }},
      {8,
       "API keys of the local server",
       {
           // A key is never stored: salt is 16 random bytes of its own, hash is SHA-256(salt || key's UTF-8).
           // prefix: the key's first characters, so the user can tell keys apart. Revoking deletes the row.
           "CREATE TABLE api_keys ("
           " id INTEGER PRIMARY KEY,"
           " name TEXT NOT NULL,"
           " prefix TEXT NOT NULL,"
           " salt BLOB NOT NULL,"
           " hash BLOB NOT NULL,"
           " created_ms INTEGER NOT NULL,"
           " last_used_ms INTEGER)",
       }},
      {9,
       "the local server's request log",
       {
           // One row per answered request (ApiServer::requestFinished), oldest first by id; ServerRequestStore keeps
           // the newest few thousand, deleting older rows as it adds one. ttft_ms NULL: no token came.
           "CREATE TABLE server_requests ("
           " id INTEGER PRIMARY KEY,"
           " when_ms INTEGER NOT NULL,"
           " method TEXT NOT NULL,"
           " path TEXT NOT NULL,"
           " status INTEGER NOT NULL,"
           " prompt_tokens INTEGER NOT NULL DEFAULT 0,"
           " completion_tokens INTEGER NOT NULL DEFAULT 0,"
           " ms REAL NOT NULL DEFAULT 0,"
           " ttft_ms REAL)",
       }},
  };
  return steps;
}
