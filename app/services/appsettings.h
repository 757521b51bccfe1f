// AppSettings: the user's preferences and remembered state, persisted with QSettings.
//
// Lives on the GUI thread. Every setter writes through at once (QSettings syncs in the background),
// so nothing is lost if the app is killed rather than quit.
#pragma once

#include <QObject>
#include <QRect>
#include <QSettings>
#include <QString>
#include <QVariantMap>

class AppSettings : public QObject {
  Q_OBJECT
  // CPU threads for the next model load; 0 = all cores.
  Q_PROPERTY(int threads READ threads WRITE setThreads NOTIFY threadsChanged)
  // "light" or "dark".
  Q_PROPERTY(QString theme READ theme WRITE setTheme NOTIFY themeChanged)
  Q_PROPERTY(bool darkTheme READ darkTheme NOTIFY themeChanged)
  Q_PROPERTY(QString lastModelPath READ lastModelPath WRITE setLastModelPath NOTIFY lastModelPathChanged)
  Q_PROPERTY(int maxThreads READ maxThreads CONSTANT)
  // The first-run note about the starter model was closed; it is not shown again.
  Q_PROPERTY(bool welcomeDismissed READ welcomeDismissed WRITE setWelcomeDismissed NOTIFY welcomeDismissedChanged)
  // The reward model folder that scores chat replies; empty: none.
  Q_PROPERTY(QString rewardModelPath READ rewardModelPath WRITE setRewardModelPath NOTIFY rewardModelPathChanged)

 public:
  explicit AppSettings(QObject* parent = nullptr);

  int threads() const { return m_threads; }
  void setThreads(int threads);
  QString theme() const { return m_theme; }
  void setTheme(const QString& theme);
  bool darkTheme() const { return m_theme == QLatin1String("dark"); }
  QString lastModelPath() const { return m_lastModelPath; }
  void setLastModelPath(const QString& path);
  int maxThreads() const;
  bool welcomeDismissed() const { return m_welcomeDismissed; }
  void setWelcomeDismissed(bool dismissed);
  QString rewardModelPath() const { return m_rewardModelPath; }
  void setRewardModelPath(const QString& path);

  // The Chat page's sampling settings that differ from its defaults (ChatController's
  // changedGenerationSettings), restored at launch.
  QVariantMap chatSampling() const;
  void setChatSampling(const QVariantMap& settings);

  // The local server's settings (ServerService: host, port, parallel, queue, context, requireKey,
  // allowedHosts, modelPath) that differ from its defaults.
  QVariantMap serverSettings() const;
  void setServerSettings(const QVariantMap& settings);

  // Window placement is restored by main.cpp, not bound in QML, so it is not a property.
  QRect windowGeometry() const;
  bool windowMaximized() const;
  void setWindowGeometry(const QRect& geometry, bool maximized);

 Q_SIGNALS:
  void threadsChanged();
  void themeChanged();
  void lastModelPathChanged();
  void welcomeDismissedChanged();
  void rewardModelPathChanged();

 private:
  QSettings m_settings;
  int m_threads = 0;
  QString m_theme;
  QString m_lastModelPath;
  bool m_welcomeDismissed = false;
  QString m_rewardModelPath;
};
