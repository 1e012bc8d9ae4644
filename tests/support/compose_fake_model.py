"""A scripted command-line 'model' for the end-to-end test: `python compose_fake_model.py AUDIO PROMPT`.

It looks the sample up in the set's metadata (the answer key) and replies with a fixed behaviour per
layer, so that every score of the pipeline is known in advance:
recognition correct and tagged; selection 'Segment 1' untagged; atomic right for segment 1, wrong for
segment 2; compositional right but with reasoning inside <ans>; step-by-step gives the distractor.
"""

import json
import sys
from pathlib import Path

audio, prompt = Path(sys.argv[1]), sys.argv[2]
rows = [json.loads(x) for x in (audio.parent.parent / "metadata.jsonl").read_text().splitlines()]
row = next(r for r in rows if Path(r["audio"]).name == audio.name)
s1, s2 = row["segments"]
target = row["segments"][row["target_segment"] - 1]
other = row["segments"][2 - row["target_segment"]]
if "For each segment choose" in prompt:
    print(f"<event_1>{s1['cue_value']}</event_1>\n<event_2>{s2['cue_value']}</event_2>")
elif "Which segment" in prompt:
    print("Segment 1 matches the description.")
elif "Answer both" in prompt:
    print(f"<ans_1>{s1['answers'][0]}</ans_1> <ans_2>{int(s2['answers'][0]) + 1}</ans_2>")
elif "step by step" in prompt:
    print(f"Step 1: the segment is the other one.\n<ans>{other['answers'][0]}</ans>")
else:
    print(f"<ans>That segment asks: {target['text']} The result is {target['answers'][0]}.</ans>")
