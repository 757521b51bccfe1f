// Chat export and import.
#include "chatexport.h"

#include <QFileInfo>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QObject>
#include <QSaveFile>

namespace {

QString roleTitle(const QString& role) {
  if (role == QLatin1String("user")) return QObject::tr("User");
  if (role == QLatin1String("assistant")) return QObject::tr("Assistant");
  return QObject::tr("System");
}

}  // namespace

QString chatToMarkdown(const StoredChat& chat, const QList<StoredMessage>& path) {
  QString out = QStringLiteral("# %1\n\n").arg(chat.title.isEmpty() ? QObject::tr("Chat") : chat.title);
  if (!chat.systemPrompt.isEmpty())
    out += QStringLiteral("### %1\n\n%2\n\n").arg(roleTitle(QStringLiteral("system")), chat.systemPrompt);
  for (const StoredMessage& m : path) {
    out += QStringLiteral("### %1\n\n%2\n\n").arg(roleTitle(m.role), m.content);
    if (!m.complete) out += QObject::tr("*(reply incomplete)*\n\n");
  }
  return out;
}

QByteArray chatToOpenAiJson(const StoredChat& chat, const QList<StoredMessage>& path) {
  QJsonArray messages;
  if (!chat.systemPrompt.isEmpty())
    messages.append(QJsonObject{{QStringLiteral("role"), QStringLiteral("system")},
                                {QStringLiteral("content"), chat.systemPrompt}});
  for (const StoredMessage& m : path)
    messages.append(QJsonObject{{QStringLiteral("role"), m.role}, {QStringLiteral("content"), m.content}});
  return QJsonDocument(QJsonObject{{QStringLiteral("title"), chat.title}, {QStringLiteral("messages"), messages}})
      .toJson(QJsonDocument::Indented);
}

ImportedChat chatFromOpenAiJson(const QByteArray& json, const QString& sourceName) {
  ImportedChat out;
  const QString file = QFileInfo(sourceName).fileName();
  auto fail = [&](const QString& why) {
    out = {};
    out.error = QObject::tr("Cannot import %1: %2").arg(file, why);
    return out;
  };
  QJsonParseError parseError;
  const QJsonDocument doc = QJsonDocument::fromJson(json, &parseError);
  if (parseError.error != QJsonParseError::NoError)
    return fail(QObject::tr("not valid JSON (%1 at byte %2)").arg(parseError.errorString()).arg(parseError.offset));
  QJsonArray messages;
  if (doc.isArray()) {
    messages = doc.array();
  } else if (doc.isObject()) {
    const QJsonObject root = doc.object();
    if (!root.value(QStringLiteral("messages")).isArray())
      return fail(QObject::tr("expected an object with a \"messages\" array, or an array of messages"));
    messages = root.value(QStringLiteral("messages")).toArray();
    if (root.value(QStringLiteral("title")).isString())
      out.title = root.value(QStringLiteral("title")).toString().trimmed();
  } else {
    return fail(QObject::tr("expected an object with a \"messages\" array, or an array of messages"));
  }
  if (messages.isEmpty()) return fail(QObject::tr("\"messages\" is empty"));

  QStringList leadingSystem;
  for (qsizetype i = 0; i < messages.size(); ++i) {
    const QString where = QStringLiteral("messages[%1]").arg(i);
    if (!messages.at(i).isObject()) return fail(QObject::tr("%1 is not an object").arg(where));
    const QJsonObject m = messages.at(i).toObject();
    const QJsonValue roleValue = m.value(QStringLiteral("role"));
    if (!roleValue.isString()) return fail(QObject::tr("%1.role is missing or not a string").arg(where));
    const QString role = roleValue.toString();
    if (role != QLatin1String("system") && role != QLatin1String("user") && role != QLatin1String("assistant"))
      return fail(
          QObject::tr("%1.role is \"%2\"; expected \"system\", \"user\" or \"assistant\"").arg(where, role.left(40)));
    const QJsonValue contentValue = m.value(QStringLiteral("content"));
    QString content;
    if (contentValue.isString()) {
      content = contentValue.toString();
    } else if (contentValue.isArray()) {
      const QJsonArray parts = contentValue.toArray();
      for (qsizetype p = 0; p < parts.size(); ++p) {
        const QJsonObject part = parts.at(p).toObject();
        if (part.value(QStringLiteral("type")).toString() != QLatin1String("text") ||
            !part.value(QStringLiteral("text")).isString())
          return fail(QObject::tr("%1.content[%2] is not a text part (only text can be imported)").arg(where).arg(p));
        content += part.value(QStringLiteral("text")).toString();
      }
    } else {
      return fail(QObject::tr("%1.content is missing or not a string").arg(where));
    }
    if (role == QLatin1String("system") && out.messages.isEmpty()) leadingSystem << content;
    else out.messages << ChatTurn{role, content};
  }
  out.systemPrompt = leadingSystem.join(QStringLiteral("\n\n"));
  if (out.title.isEmpty()) out.title = QFileInfo(sourceName).completeBaseName();
  return out;
}

QString writeFileAtomically(const QString& path, const QByteArray& bytes) {
  QSaveFile f(path);
  if (!f.open(QIODevice::WriteOnly)) return QObject::tr("Cannot write %1: %2").arg(path, f.errorString());
  if (f.write(bytes) != bytes.size() || !f.commit())
    return QObject::tr("Cannot write %1: %2").arg(path, f.errorString());
  return {};
}
