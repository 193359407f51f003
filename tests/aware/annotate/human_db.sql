BEGIN TRANSACTION;
CREATE TABLE events (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    instance_id TEXT NOT NULL REFERENCES sample (instance_id),
    annotator TEXT NOT NULL,
    action TEXT NOT NULL CHECK (action IN ('answer', 'skip', 'undo')),
    answer TEXT CHECK (answer IN ('yes', 'no')),
    seconds REAL,
    created_at REAL NOT NULL,
    undoes_seq INTEGER REFERENCES events (seq),
    CHECK ((action = 'answer') = (answer IS NOT NULL)),
    CHECK ((action = 'undo') = (undoes_seq IS NOT NULL))
);
INSERT INTO "events" VALUES(1,'a','ann','answer','yes',1.5,1010.0,NULL);
INSERT INTO "events" VALUES(2,'b','ann','skip',NULL,2.0,1012.0,NULL);
INSERT INTO "events" VALUES(3,'c','bob','answer','no',3.25,1014.0,NULL);
INSERT INTO "events" VALUES(4,'c','bob','undo',NULL,NULL,1015.0,3);
CREATE TABLE leases (
    instance_id TEXT PRIMARY KEY,
    annotator TEXT NOT NULL,
    claimed_at REAL NOT NULL,
    expires_at REAL NOT NULL
);
INSERT INTO "leases" VALUES('b','bob',1013.0,1613.0);
INSERT INTO "leases" VALUES('c','bob',1015.0,1615.0);
CREATE TABLE meta (
    key TEXT PRIMARY KEY,
    value TEXT NOT NULL
);
INSERT INTO "meta" VALUES('dataset','ds.jsonl');
INSERT INTO "meta" VALUES('sample_digest','d1');
INSERT INTO "meta" VALUES('n','3');
INSERT INTO "meta" VALUES('seed','0');
INSERT INTO "meta" VALUES('balanced','false');
INSERT INTO "meta" VALUES('size','3');
INSERT INTO "meta" VALUES('created_at','1008.0');
CREATE TABLE sample (
    position INTEGER PRIMARY KEY,
    instance_id TEXT NOT NULL UNIQUE
);
INSERT INTO "sample" VALUES(1,'a');
INSERT INTO "sample" VALUES(2,'b');
INSERT INTO "sample" VALUES(3,'c');
CREATE INDEX events_by_instance ON events (instance_id, seq);
CREATE INDEX events_by_annotator ON events (annotator, seq);
CREATE UNIQUE INDEX events_undone_once ON events (undoes_seq)
    WHERE undoes_seq IS NOT NULL;
DELETE FROM "sqlite_sequence";
INSERT INTO "sqlite_sequence" VALUES('events',4);
COMMIT;
