"""An answer with a sentence its samples contradict: the consistency tests'
shared item (Lamport's PhD was from Brandeis, not Berkeley)."""

LAMPORT = {
    "id": "lamport",
    "prompt": "Tell me a bio of Leslie Lamport.",
    "response": "Leslie Lamport is a computer scientist. Lamport received his "
    "PhD from Berkeley in 1972. He won the Turing Award in 2013.",
    "samples": [
        {
            "text": "Leslie Lamport is a computer scientist. Lamport received "
            "his PhD from Brandeis in 1972. He won the Turing Award in 2013.",
            "model": "model-a",
            "variant": "identity",
        },
        {
            "text": "Leslie Lamport is a computer scientist known for Paxos. He "
            "won the Turing Award in 2013.",
            "model": "model-b",
            "variant": "rephrase",
        },
    ],
}
