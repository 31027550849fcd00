package secret

import "testing"

// families34 extends the phrasings to Dutch, Russian, Polish, Swedish and
// Turkish, "pw for X = …" and a Google key ID echoed by a model.
var families34 = []family{
	{name: "Dutch",
		found: []struct{ text, value string }{
			{"mijn wachtwoord is Tulpen2024", "Tulpen2024"},
			{"het wachtwoord van de bank is Gracht#77", "Gracht#77"},
			{"wachtwoord: fietsbel9", "fietsbel9"},
			{"mijn pincode is 4821", "4821"},
		},
		kept: []string{"Ik ben mijn wachtwoord vergeten.", "De pincode is geheim.", "Wachtwoord wijzigen kan in de app."},
	},
	{name: "Russian",
		found: []struct{ text, value string }{
			{"мой пароль — Matryoshka7", "Matryoshka7"},
			{"пароль от почты: kotik2024", "kotik2024"},
			{"Пароль: Медведь99", "Медведь99"},
			{"мой пароль qwerty123", "qwerty123"},
			{"пин-код карты: 5937", "5937"},
		},
		kept: []string{"Я забыл пароль.", "Пароль должен быть длинным.", "мой пароль забыт", "пин-код — это секрет"},
	},
	{name: "Polish",
		found: []struct{ text, value string }{
			{"moje hasło to Pierogi42", "Pierogi42"},
			{"hasło do banku to Wisla#2026", "Wisla#2026"},
			{"hasło: Krakow77", "Krakow77"},
			{"kod PIN: 7395", "7395"},
		},
		kept: []string{"Zapomniałem hasła.", "Hasło jest tajne.", "kod PIN jest tajny"},
	},
	{name: "Swedish",
		found: []struct{ text, value string }{
			{"mitt lösenord är Kanelbulle8", "Kanelbulle8"},
			{"lösenordet till banken är Midsommar#24", "Midsommar#24"},
			{"min pinkod är 2684", "2684"},
			{"Lösenord: Fika2025", "Fika2025"},
		},
		kept: []string{"Jag har glömt mitt lösenord.", "Lösenordet är hemligt.", "pinkoden är hemlig"},
	},
	{name: "Turkish",
		found: []struct{ text, value string }{
			{"şifrem: Lokum2024", "Lokum2024"},
			{"banka şifrem 4711", "4711"},
			{"parolam şu: Bogaz#99", "Bogaz#99"},
			{"Wi-Fi şifresi = Cay12345", "Cay12345"},
			{"PIN kodum 8264", "8264"},
		},
		kept: []string{"Şifremi unuttum.", "şifrem yok", "Parola güçlü olmalı.", "şifre değiştirildi"},
	},
	{name: "pw for X",
		found: []struct{ text, value string }{
			{"pw for my bank = Sunny#2026", "Sunny#2026"},
			{"PW: hunter2x", "hunter2x"},
			{"the password for the home wifi is Lantern55", "Lantern55"},
		},
		kept: []string{"I need a new pw soon.", "the pw field is empty"},
	},
	{name: "Google service account key ID",
		found: []struct{ text, value string }{
			{`"private_key_id": "` + gcpKeyID + `",`, gcpKeyID},
			{"The private key ID is " + gcpKeyID + ".", gcpKeyID},
		},
		kept: []string{"The private key id field is in the JSON file.", "private_key_id: see the console"},
	},
}

var gcpKeyID = "4f2a9c1e0b7d" + "3a5e6f8091b2c4d7e8f90a1b2c3d"

func FuzzPasswordPhrasings34(f *testing.F) {
	fuzzFamily(f, []string{"mijn wachtwoord is VALUE", "пароль от почты: VALUE", "hasło do banku to VALUE", "lösenordet till banken är VALUE", "şifrem: VALUE", "banka şifrem VALUE", "pw for my bank = VALUE", "мой пароль VALUE"})
}
