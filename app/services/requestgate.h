// RequestGate: thread-safe cancellation of long requests by ticket.
//
// Each request (a model load, a generation) takes a ticket when the GUI issues it; cancel marks every
// ticket issued so far. This is why a cancel that arrives before the worker has even started the
// request still counts, and why a late cancel (clicked just as a request finished) cannot leak into
// the next request: that one gets a higher ticket. Lock-free, so the engine's callback can poll it.
#pragma once

#include <QtGlobal>

#include <atomic>

class RequestGate {
 public:
  quint64 issue() { return m_issued.fetch_add(1, std::memory_order_acq_rel) + 1; }

  void cancelIssued() {
    const quint64 upTo = m_issued.load(std::memory_order_acquire);
    quint64 current = m_cancelledUpTo.load(std::memory_order_acquire);
    // Two racing cancels must never lower the mark.
    while (current < upTo && !m_cancelledUpTo.compare_exchange_weak(current, upTo, std::memory_order_acq_rel)) {
    }
  }

  bool isCancelled(quint64 ticket) const { return ticket <= m_cancelledUpTo.load(std::memory_order_acquire); }

 private:
  std::atomic<quint64> m_issued{0};
  std::atomic<quint64> m_cancelledUpTo{0};
};
