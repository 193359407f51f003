BEGIN TRANSACTION;
CREATE TABLE events (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    instance_id TEXT NOT NULL,
    reviewer TEXT NOT NULL,
    action TEXT NOT NULL CHECK (action IN ('accept', 'reject', 'skip', 'undo')),
    reasons TEXT NOT NULL DEFAULT '[]',
    note TEXT NOT NULL DEFAULT '',
    created_at REAL NOT NULL,
    undoes_seq INTEGER REFERENCES events (seq),
    CHECK ((action = 'undo') = (undoes_seq IS NOT NULL))
);
INSERT INTO "events" VALUES(1,'a','ann','accept','[]','fine',1002.0,NULL);
INSERT INTO "events" VALUES(2,'b','bob','reject','["unnatural", "other"]','odd',1004.0,NULL);
INSERT INTO "events" VALUES(3,'c','ann','skip','[]','',1005.0,NULL);
INSERT INTO "events" VALUES(4,'a','ann','undo','[]','',1006.0,1);
CREATE TABLE leases (
    instance_id TEXT PRIMARY KEY,
    reviewer TEXT NOT NULL,
    claimed_at REAL NOT NULL,
    expires_at REAL NOT NULL
);
INSERT INTO "leases" VALUES('a','ann',1006.0,1606.0);
INSERT INTO "leases" VALUES('c','bob',1007.0,1607.0);
CREATE TABLE meta (
    key TEXT PRIMARY KEY,
    value TEXT NOT NULL
);
INSERT INTO "meta" VALUES('dataset','ds.jsonl');
INSERT INTO "meta" VALUES('ids_digest','ea7fb08b7a2dc4619ffb7c7bb38d95a2047935fa165d71b12efd3852a2e6d0cc');
INSERT INTO "meta" VALUES('ids_count','3');
INSERT INTO "meta" VALUES('created_at','1000.0');
CREATE INDEX events_by_instance ON events (instance_id, seq);
CREATE INDEX events_by_reviewer ON events (reviewer, seq);
CREATE UNIQUE INDEX events_undone_once ON events (undoes_seq)
    WHERE undoes_seq IS NOT NULL;
DELETE FROM "sqlite_sequence";
INSERT INTO "sqlite_sequence" VALUES('events',4);
COMMIT;
