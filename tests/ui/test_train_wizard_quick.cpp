// Qt Quick Test runner for the fine-tuning wizard walk-through (tests/ui/quick_wizard/), against the
// real Workbench.Ui module and a real AppController (its TrainingJobs trains for real) on a throwaway
// session database. The fixture -- a tiny GPT-2 with the test tokenizer, a good plain-text data file,
// a JSONL file with a bad row on line 2, a file of preference pairs and one of prompts -- is written into a temporary
// folder and handed to QML as the WizardFixture singleton.
#include <QFile>
#include <QQmlEngine>
#include <QTemporaryDir>
#include <QtQml/qqmlextensionplugin.h>
#include <QtQuickTest>

#include <memory>

#include "appsingleton.h"
#include "services/appcontroller.h"
#include "support/quick_test_env.h"
#include "support/tiny_text_model.h"

Q_IMPORT_QML_PLUGIN(Workbench_UiPlugin)

class WizardFixture : public QObject {
  Q_OBJECT
  Q_PROPERTY(QString modelPath MEMBER modelPath CONSTANT)
  Q_PROPERTY(QString dataPath MEMBER dataPath CONSTANT)
  Q_PROPERTY(QString badDataPath MEMBER badDataPath CONSTANT)
  Q_PROPERTY(QString pairsPath MEMBER pairsPath CONSTANT)
  Q_PROPERTY(QString promptsPath MEMBER promptsPath CONSTANT)
  Q_PROPERTY(QString exportDir MEMBER exportDir CONSTANT)
  Q_PROPERTY(QString screenshotDir MEMBER screenshotDir CONSTANT)  // WB_SCREENSHOT_DIR: save each step as PNG

 public:
  QString modelPath, dataPath, badDataPath, pairsPath, promptsPath, exportDir, screenshotDir;
};

namespace {

void writeFile(const QString& path, const QByteArray& bytes) {
  QFile f(path);
  QVERIFY(f.open(QIODevice::WriteOnly | QIODevice::Truncate));
  f.write(bytes);
}

}  // namespace

class Setup : public QObject {
  Q_OBJECT

 public Q_SLOTS:
  void applicationAvailable() {
    prepareQuickTestEnvironment(m_dir);
    m_fixture.modelPath = m_dir.filePath(QStringLiteral("tiny"));
    writeTinyTextModel(m_fixture.modelPath, 7, 64);
    // Letters a..p are what the test tokenizer merges, so this text is a few hundred tokens per copy.
    QByteArray text;
    for (int i = 0; i < 40; ++i) text += "abba cddc effe ghhg ijji klmm nop aabb ccdd\n";
    m_fixture.dataPath = m_dir.filePath(QStringLiteral("good.txt"));
    writeFile(m_fixture.dataPath, text);
    m_fixture.badDataPath = m_dir.filePath(QStringLiteral("bad.jsonl"));
    writeFile(m_fixture.badDataPath,
              "{\"messages\":[{\"role\":\"user\",\"content\":\"hi\"},{\"role\":\"assistant\",\"content\":\"hello\"}]}\n"
              "{\"messages\": [\n");
    // 20 preference pairs in the tokenizer's letters; the wizard holds out the last 4.
    QByteArray pairs;
    const char* words[] = {"abba", "cddc", "effe", "ghhg", "ijji"};
    for (int i = 0; i < 20; ++i)
      pairs += QByteArray("{\"prompt\":\"") + words[i % 5] + "\",\"chosen\":\"cddc effe " + words[(i + 1) % 5] +
               "\",\"rejected\":\"ponm lkji " + words[(i + 2) % 5] + "\"}\n";
    m_fixture.pairsPath = m_dir.filePath(QStringLiteral("pairs.jsonl"));
    writeFile(m_fixture.pairsPath, pairs);
    QByteArray prompts;
    for (int i = 0; i < 10; ++i)
      prompts += "{\"prompt\":\"What is " + QByteArray::number(i) + " + 2?\",\"answer\":\"" + QByteArray::number(i + 2) +
                 "\",\"kind\":\"arith\"}\n";
    m_fixture.promptsPath = m_dir.filePath(QStringLiteral("prompts.jsonl"));
    writeFile(m_fixture.promptsPath, prompts);
    m_fixture.exportDir = m_dir.filePath(QStringLiteral("exports"));
    m_fixture.screenshotDir = qEnvironmentVariable("WB_SCREENSHOT_DIR");
    m_controller = std::make_unique<AppController>();
    m_controller->training()->setRunsRoot(m_dir.filePath(QStringLiteral("runs")));
    AppControllerForeign::setInstance(m_controller.get());
  }
  void qmlEngineAvailable(QQmlEngine* engine) {
    engine->addImportPath(QStringLiteral("qrc:/qt/qml"));
    qmlRegisterSingletonInstance("WizardTest", 1, 0, "WizardFixture", &m_fixture);
  }
  void cleanupTestCase() { m_controller.reset(); }

 private:
  QTemporaryDir m_dir;
  WizardFixture m_fixture;
  std::unique_ptr<AppController> m_controller;
};

QUICK_TEST_MAIN_WITH_SETUP(train_wizard_quick, Setup)

#include "test_train_wizard_quick.moc"
