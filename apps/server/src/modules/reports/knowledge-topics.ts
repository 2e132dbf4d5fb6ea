import { analyzeQuery } from '../knowledge/query';

/**
 * Groups unanswered questions into topics without an embedding model: each question becomes the
 * weighted terms retrieval itself uses (jieba words without stop words, weighted by length, plus
 * their characters at a small weight, so "宽带多少钱一个月" and "宽带一个月多少钱" are the same
 * bag), and two questions are alike when the weighted Jaccard of their bags reaches
 * TOPIC_SIMILARITY. Deterministic: questions are taken in the given order and each joins the
 * existing topic whose first question it is most like (earlier topic on ties), or starts one.
 */
export const TOPIC_SIMILARITY = 0.5;

type Bag = Map<string, number>;

export function termBag(question: string): Bag {
  const bag: Bag = new Map();
  for (const t of analyzeQuery(question).terms)
    if (!t.bigram) bag.set(t.term, Math.max(bag.get(t.term) ?? 0, t.weight));
  return bag;
}

export function similarity(a: Bag, b: Bag): number {
  let min = 0;
  let max = 0;
  for (const [term, wa] of a) {
    const wb = b.get(term) ?? 0;
    min += Math.min(wa, wb);
    max += Math.max(wa, wb);
  }
  for (const [term, wb] of b) if (!a.has(term)) max += wb;
  return max === 0 ? 0 : min / max;
}

export function groupQuestions<T extends { question: string }>(items: T[]): T[][] {
  const topics: { bag: Bag; members: T[] }[] = [];
  // The same text is one bag: near-duplicates are the common case, and jieba is not free. Its
  // similarity to each topic is kept too (topics only grow, a topic's bag never changes): a month
  // of gaps is thousands of questions in a few dozen wordings.
  const bags = new Map<string, { bag: Bag; scores: number[] }>();
  for (const item of items) {
    const text = item.question.trim();
    let known = bags.get(text);
    if (!known) {
      known = { bag: termBag(text), scores: [] };
      bags.set(text, known);
    }
    const { bag, scores } = known;
    let best: { bag: Bag; members: T[] } | undefined;
    let bestScore = TOPIC_SIMILARITY;
    for (const [i, topic] of topics.entries()) {
      scores[i] ??= similarity(bag, topic.bag);
      const score = scores[i];
      if (score >= bestScore && (best === undefined || score > bestScore)) {
        best = topic;
        bestScore = score;
      }
    }
    if (best) best.members.push(item);
    else topics.push({ bag, members: [item] });
  }
  return topics.map((t) => t.members);
}

/** The topic's most asked wording; on a tie the one asked first. */
export function representative<T extends { question: string }>(members: T[]): T {
  const counts = new Map<string, number>();
  for (const m of members) counts.set(m.question, (counts.get(m.question) ?? 0) + 1);
  let best = members[0]!;
  for (const m of members) if (counts.get(m.question)! > counts.get(best.question)!) best = m;
  return best;
}
