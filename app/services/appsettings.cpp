// AppSettings: QSettings keys and defaults.
#include "appsettings.h"

#include <QJsonDocument>
#include <QJsonObject>
#include <QThread>

namespace {
// NOTE: these keys are stored on users' disks; do not rename them.
const QString kThreads = QStringLiteral("engine/threads");
const QString kTheme = QStringLiteral("ui/theme");
const QString kLastModel = QStringLiteral("models/lastPath");
const QString kGeometry = QStringLiteral("window/geometry");
const QString kMaximized = QStringLiteral("window/maximized");
const QString kWelcomeDismissed = QStringLiteral("ui/welcomeDismissed");
const QString kRewardModel = QStringLiteral("chat/rewardModel");
const QString kChatSampling = QStringLiteral("chat/sampling");  // a JSON object: readable in the file
const QString kServer = QStringLiteral("server/settings");       // a JSON object, as kChatSampling
}  // namespace

AppSettings::AppSettings(QObject* parent) : QObject(parent) {
  m_threads = qBound(0, m_settings.value(kThreads, 0).toInt(), maxThreads());
  m_theme = m_settings.value(kTheme, QStringLiteral("light")).toString();
  if (m_theme != QLatin1String("dark")) m_theme = QStringLiteral("light");
  m_lastModelPath = m_settings.value(kLastModel).toString();
  m_welcomeDismissed = m_settings.value(kWelcomeDismissed, false).toBool();
  m_rewardModelPath = m_settings.value(kRewardModel).toString();
}

// Twice the cores: enough room to measure oversubscription, a bound that stops typos like 800.
int AppSettings::maxThreads() const { return qMax(1, QThread::idealThreadCount()) * 2; }

void AppSettings::setThreads(int threads) {
  threads = qBound(0, threads, maxThreads());
  if (threads == m_threads) return;
  m_threads = threads;
  m_settings.setValue(kThreads, threads);
  Q_EMIT threadsChanged();
}

void AppSettings::setTheme(const QString& theme) {
  const QString normalized = theme == QLatin1String("dark") ? theme : QStringLiteral("light");
  if (normalized == m_theme) return;
  m_theme = normalized;
  m_settings.setValue(kTheme, normalized);
  Q_EMIT themeChanged();
}

void AppSettings::setLastModelPath(const QString& path) {
  if (path == m_lastModelPath) return;
  m_lastModelPath = path;
  m_settings.setValue(kLastModel, path);
  Q_EMIT lastModelPathChanged();
}

void AppSettings::setWelcomeDismissed(bool dismissed) {
  if (dismissed == m_welcomeDismissed) return;
  m_welcomeDismissed = dismissed;
  m_settings.setValue(kWelcomeDismissed, dismissed);
  Q_EMIT welcomeDismissedChanged();
}

void AppSettings::setRewardModelPath(const QString& path) {
  if (path == m_rewardModelPath) return;
  m_rewardModelPath = path;
  if (path.isEmpty()) m_settings.remove(kRewardModel);
  else m_settings.setValue(kRewardModel, path);
  Q_EMIT rewardModelPathChanged();
}

QRect AppSettings::windowGeometry() const { return m_settings.value(kGeometry).toRect(); }

bool AppSettings::windowMaximized() const { return m_settings.value(kMaximized, false).toBool(); }

void AppSettings::setWindowGeometry(const QRect& geometry, bool maximized) {
  // A maximized window's geometry is the screen; keep the last normal one so un-maximizing works.
  if (!maximized && geometry.isValid()) m_settings.setValue(kGeometry, geometry);
  m_settings.setValue(kMaximized, maximized);
}

QVariantMap AppSettings::chatSampling() const {
  const QJsonDocument doc = QJsonDocument::fromJson(m_settings.value(kChatSampling).toString().toUtf8());
  return doc.isObject() ? doc.object().toVariantMap() : QVariantMap{};
}

void AppSettings::setChatSampling(const QVariantMap& settings) {
  const QString json = QString::fromUtf8(QJsonDocument(QJsonObject::fromVariantMap(settings)).toJson(QJsonDocument::Compact));
  if (m_settings.value(kChatSampling).toString() == json) return;
  if (settings.isEmpty()) m_settings.remove(kChatSampling);
  else m_settings.setValue(kChatSampling, json);
}

QVariantMap AppSettings::serverSettings() const {
  const QJsonDocument doc = QJsonDocument::fromJson(m_settings.value(kServer).toString().toUtf8());
  return doc.isObject() ? doc.object().toVariantMap() : QVariantMap{};
}

void AppSettings::setServerSettings(const QVariantMap& settings) {
  const QString json = QString::fromUtf8(QJsonDocument(QJsonObject::fromVariantMap(settings)).toJson(QJsonDocument::Compact));
  if (m_settings.value(kServer).toString() == json) return;
  if (settings.isEmpty()) m_settings.remove(kServer);
  else m_settings.setValue(kServer, json);
}
