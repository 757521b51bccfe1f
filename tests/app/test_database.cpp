// Database's query helper and Transaction, on a scratch table of a real database file: values are
// bound by position and read back exactly (text, NULL, blobs with zero bytes, 64-bit integers), an
// empty result is no error, a failure surfaces with SQLite's own words under the caller's sentence,
// and a transaction stops at its first failure and keeps nothing of it.
#include <QSignalSpy>
#include <QSqlQuery>
#include <QTemporaryDir>
#include <QTest>

#include "services/store/database.h"
#include "services/store/transaction.h"

namespace {

struct Row {
  qint64 id = 0;
  QString name;
  QVariant note;  // NULL stays a null QVariant
  double score = 0;
  QByteArray data;
};

Row rowFrom(const QSqlQuery& q) {
  return Row{q.value(0).toLongLong(), q.value(1).toString(), q.value(2), q.value(3).toDouble(),
             q.value(4).toByteArray()};
}

const QString kSelectAll = QStringLiteral("SELECT id, name, note, score, data FROM scratch ORDER BY id");

}  // namespace

class TestDatabase : public QObject {
  Q_OBJECT

 private Q_SLOTS:
  void init();
  void bindsAndMapsRows();
  void emptyResultIsNoError();
  void errorsCarrySqliteText();
  void transactionStopsAtFirstFailure();
  void transactionRefusedByCaller();
  void writeEachIsAllOrNothing();

 private:
  QTemporaryDir m_dir;
  std::unique_ptr<Database> m_db;
};

void TestDatabase::init() {
  m_db = std::make_unique<Database>();
  QFile::remove(m_dir.filePath(QStringLiteral("db.sqlite")));
  QCOMPARE(m_db->open(m_dir.filePath(QStringLiteral("db.sqlite"))), Database::OpenState::Ok);
  QVERIFY(m_db->write(QStringLiteral("Could not create the table"),
                      QStringLiteral(
                          "CREATE TABLE scratch (id INTEGER PRIMARY KEY, name TEXT NOT NULL, note TEXT, score REAL,"
                          " data BLOB)")));
}

void TestDatabase::bindsAndMapsRows() {
  const QByteArray blob("a\0b\xff", 4);
  const QString tricky = QStringLiteral("'); DROP TABLE scratch; -- ✓");
  qint64 first = 0, second = 0;
  QVERIFY(m_db->write(QStringLiteral("w"),
                      QStringLiteral("INSERT INTO scratch (id, name, note, score, data) VALUES (?, ?, ?, ?, ?)"),
                      {qint64(1) << 40, tricky, QVariant(), 2.5, blob}, &first));
  // A null QString is text (''), not NULL: the NOT NULL column takes it.
  QVERIFY(m_db->write(QStringLiteral("w"), QStringLiteral("INSERT INTO scratch (name, note, score) VALUES (?, ?, ?)"),
                      {QString(), QStringLiteral("n"), -1.0}, &second));
  QCOMPARE(first, qint64(1) << 40);
  QCOMPARE(second, first + 1);

  const QList<Row> rows = m_db->select(QStringLiteral("r"), kSelectAll, {}, rowFrom);
  QCOMPARE(rows.size(), 2);
  QCOMPARE(rows[0].id, qint64(1) << 40);
  QCOMPARE(rows[0].name, tricky);
  QVERIFY(rows[0].note.isNull());
  QCOMPARE(rows[0].score, 2.5);
  QCOMPARE(rows[0].data, blob);
  QCOMPARE(rows[1].name, QString(""));
  QVERIFY(!rows[1].name.isNull());
  QCOMPARE(rows[1].note.toString(), QStringLiteral("n"));

  // Values bind in order, to every ? of the statement.
  const QList<qint64> ids =
      m_db->select(QStringLiteral("r"), QStringLiteral("SELECT id FROM scratch WHERE name = ? AND score < ?"),
                   {QString(), 0.0}, [](const QSqlQuery& q) { return q.value(0).toLongLong(); });
  QCOMPARE(ids, QList<qint64>{second});
  QVERIFY(m_db->lastError().isEmpty());
}

void TestDatabase::emptyResultIsNoError() {
  QVERIFY(m_db->select(QStringLiteral("r"), kSelectAll, {}, rowFrom).isEmpty());
  QVERIFY(m_db->select(QStringLiteral("r"), QStringLiteral("SELECT id FROM scratch WHERE id = ?"), {42},
                       [](const QSqlQuery& q) { return q.value(0).toLongLong(); })
              .isEmpty());
  // One-row reads take value(0): a default row when there is none.
  QCOMPARE(m_db->select(QStringLiteral("r"), kSelectAll, {}, rowFrom).value(0).id, 0);
  QVERIFY(m_db->lastError().isEmpty());
}

void TestDatabase::errorsCarrySqliteText() {
  QSignalSpy failed(m_db.get(), &Database::writeFailed);
  // A read: no rows, the reason in lastError, no writeFailed (the UI shows what it could read).
  QTest::ignoreMessage(QtWarningMsg, "Database: Could not read the notes: no such table: notes");
  QVERIFY(m_db->select(QStringLiteral("Could not read the notes"), QStringLiteral("SELECT * FROM notes"), {}, rowFrom)
              .isEmpty());
  QCOMPARE(m_db->lastError(), QStringLiteral("Could not read the notes: no such table: notes"));
  QCOMPARE(failed.count(), 0);
  // A write: false, the reason, and writeFailed with the same sentence.
  QVERIFY(!m_db->write(QStringLiteral("Could not save the note"),
                       QStringLiteral("INSERT INTO scratch (name) VALUES (NULL)")));
  QCOMPARE(m_db->lastError(), QStringLiteral("Could not save the note: NOT NULL constraint failed: scratch.name"));
  QCOMPARE(failed.count(), 1);
  QCOMPARE(failed.first().first().toString(), m_db->lastError());
  // More values than the statement has places is an error too, not silently dropped values.
  QVERIFY(!m_db->write(QStringLiteral("Could not save the note"),
                       QStringLiteral("INSERT INTO scratch (name) VALUES (?)"),
                       {QStringLiteral("a"), QStringLiteral("b")}));
  QCOMPARE(failed.count(), 2);
  QVERIFY(m_db->select(QStringLiteral("r"), kSelectAll, {}, rowFrom).isEmpty());
  // The next successful write clears it.
  QVERIFY(m_db->write(QStringLiteral("w"), QStringLiteral("INSERT INTO scratch (name) VALUES (?)"),
                      {QStringLiteral("ok")}));
  QVERIFY(m_db->lastError().isEmpty());
}

void TestDatabase::transactionStopsAtFirstFailure() {
  QSignalSpy failed(m_db.get(), &Database::writeFailed);
  {
    Transaction tx(*m_db, QStringLiteral("Could not save the notes"));
    QVERIFY(tx.insert(QStringLiteral("INSERT INTO scratch (name) VALUES (?)"), {QStringLiteral("kept?")}) > 0);
    // Reads inside the transaction see its own writes.
    QCOMPARE(tx.select(kSelectAll, {}, rowFrom).size(), 1);
    QVERIFY(!tx.exec(QStringLiteral("INSERT INTO scratch (name) VALUES (NULL)")));
    QVERIFY(!tx.ok());
    // Later statements do not run, however valid.
    QCOMPARE(tx.insert(QStringLiteral("INSERT INTO scratch (name) VALUES (?)"), {QStringLiteral("after")}), 0);
    QVERIFY(tx.select(kSelectAll, {}, rowFrom).isEmpty());
    QVERIFY(!tx.commit());
    QCOMPARE(failed.count(), 1);
    QCOMPARE(m_db->lastError(), QStringLiteral("Could not save the notes: NOT NULL constraint failed: scratch.name"));
  }
  QVERIFY(m_db->select(QStringLiteral("r"), kSelectAll, {}, rowFrom).isEmpty());  // rolled back: nothing kept
  // Nothing is left open: the next write works.
  QVERIFY(m_db->write(QStringLiteral("w"), QStringLiteral("INSERT INTO scratch (name) VALUES ('x')")));
  QCOMPARE(m_db->select(QStringLiteral("r"), kSelectAll, {}, rowFrom).size(), 1);
}

void TestDatabase::transactionRefusedByCaller() {
  QSignalSpy failed(m_db.get(), &Database::writeFailed);
  Transaction tx(*m_db, QStringLiteral("Could not move the note"));
  tx.exec(QStringLiteral("INSERT INTO scratch (name) VALUES ('gone')"));
  QVERIFY(!tx.fail(QStringLiteral("note 7 is not in folder 3")));
  QCOMPARE(m_db->lastError(), QStringLiteral("Could not move the note: note 7 is not in folder 3"));
  QVERIFY(!tx.commit());  // reported once, by fail()
  QCOMPARE(failed.count(), 1);
  QVERIFY(m_db->select(QStringLiteral("r"), kSelectAll, {}, rowFrom).isEmpty());
}

void TestDatabase::writeEachIsAllOrNothing() {
  const QString sql = QStringLiteral("INSERT INTO scratch (id, name) VALUES (?, ?)");
  qint64 last = 0;
  QVERIFY(m_db->writeEach(QStringLiteral("w"), sql, {{1, QStringLiteral("a")}, {2, QStringLiteral("b")}}, &last));
  QCOMPARE(last, 2);
  // The third row repeats an id: none of the three is kept.
  QVERIFY(!m_db->writeEach(QStringLiteral("Could not save the rows"), sql,
                           {{3, QStringLiteral("c")}, {4, QStringLiteral("d")}, {1, QStringLiteral("again")}}));
  QVERIFY2(m_db->lastError().startsWith(QStringLiteral("Could not save the rows: UNIQUE constraint failed")),
           qPrintable(m_db->lastError()));
  QCOMPARE(m_db->select(QStringLiteral("r"), kSelectAll, {}, rowFrom).size(), 2);
}

QTEST_GUILESS_MAIN(TestDatabase)
#include "test_database.moc"
